/**
 * The server's side of position labels (docs/transparency-log.md, Position keys): the VRF key
 * derived from each receipt signing key the service holds, the label of a receipt's position
 * (its signed room_id and sequence), and the commitment leaf the integrator appends. The VRF
 * itself, the position alpha and the leaf format are shared with the client (vrf.ts,
 * receipt-leaf.ts); this module only binds them to the keyring and keeps the costly results.
 */
import { base64urlDecodeStrict } from '../receipts/base64url.js';
import { receiptHash } from '../receipts/hash.js';
import type { Keyring } from '../receipts/keyring.js';
import { type SigningKey, seedOf } from '../receipts/keys.js';
import { positionAlpha, positionKeyFor } from './position.js';
import { type FastVrfKey, fastVrfKeyFromSeed, positionKeySeed } from './position-output.js';
import { receiptLeaf } from './receipt-leaf.js';
import type { VrfKey } from './vrf.js';

/** The bytes of a label: the first 32 bytes of the VRF output. */
const LABEL_BYTES = 32;
/** Proofs kept for the member endpoint and /outcome (about 200 bytes each). */
const KEPT_PROOFS = 20_000;

export interface ReceiptPosition {
  roomId: string;
  sequence: number;
}

/** A position label with the VRF proof that it is the only label of that position under the key. */
export interface ProvenLabel {
  key_id: string;
  label: Uint8Array;
  proof: Uint8Array;
}

/** A receipt whose signed payload names no room or sequence: never one this service signed. */
export class ReceiptPositionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReceiptPositionError';
  }
}

/** The position a receipt claims in its room's chain, read from its SIGNED payload (never from the store's row). */
export function receiptPosition(jws: string): ReceiptPosition {
  let svc: { room_id?: unknown; sequence?: unknown } | undefined;
  try {
    const payload = JSON.parse(new TextDecoder().decode(base64urlDecodeStrict(jws.split('.')[1] ?? ''))) as {
      svc?: { room_id?: unknown; sequence?: unknown };
    };
    svc = payload.svc;
  } catch {
    throw new ReceiptPositionError('the receipt payload is not base64url JSON');
  }
  if (typeof svc?.room_id !== 'string' || !Number.isSafeInteger(svc.sequence) || (svc.sequence as number) < 1) {
    throw new ReceiptPositionError('the receipt payload names no svc.room_id and svc.sequence');
  }
  return { roomId: svc.room_id, sequence: svc.sequence as number };
}

const ascii = new TextDecoder('ascii');

export class PositionLabels {
  /** Position keys by the receipt key's kid: deriving one costs a hash and a scalar multiplication. */
  private readonly keys = new Map<string, { key: VrfKey; fast: FastVrfKey }>();
  private readonly proofs = new Map<string, ProvenLabel>();

  constructor(private readonly keyring: Keyring) {}

  /** The position key of the current signing key: the one new leaves are labelled with. */
  current(): VrfKey {
    return this.keyOf(this.keyring.current).key;
  }

  /** The position key of every signing key the service holds, current first (discovery, the member endpoint). */
  all(): VrfKey[] {
    const current = this.keyring.current;
    return [current, ...this.keyring.all.filter((key) => key.kid !== current.kid)].map((key) => this.keyOf(key).key);
  }

  /** The held position key with this key id, or null. */
  byId(keyId: string): VrfKey | null {
    return this.all().find((key) => key.keyId === keyId) ?? null;
  }

  /** A position's label under `key`, with its VRF proof (kept: the member endpoint asks for the same ones again). */
  prove(key: VrfKey, position: ReceiptPosition): ProvenLabel {
    const cacheKey = `${key.keyId}\n${position.sequence}\n${position.roomId}`;
    const known = this.proofs.get(cacheKey);
    if (known) return known;
    const { proof, output } = key.prove(positionAlpha(position.roomId, position.sequence));
    const proven = { key_id: key.keyId, label: output.slice(0, LABEL_BYTES), proof };
    if (this.proofs.size >= KEPT_PROOFS) this.proofs.delete(this.proofs.keys().next().value as string);
    this.proofs.set(cacheKey, proven);
    return proven;
  }

  /**
   * The log entry of a receipt: its commitment leaf under the current position key, and its
   * receipt hash. Only the VRF output is computed (position-output.ts): the integrator labels
   * every receipt, and the proof is asked for only by readers.
   */
  entry(jws: string): { data: string; receipt_hash: string } {
    const { key, fast } = this.keyOf(this.keyring.current);
    const position = receiptPosition(jws);
    const label = fast.output(positionAlpha(position.roomId, position.sequence)).slice(0, LABEL_BYTES);
    return { data: ascii.decode(receiptLeaf(jws, key.keyId, label)), receipt_hash: receiptHash(jws) };
  }

  private keyOf(signing: SigningKey): { key: VrfKey; fast: FastVrfKey } {
    let known = this.keys.get(signing.kid);
    if (!known) {
      const seed = seedOf(signing);
      known = { key: positionKeyFor(seed), fast: fastVrfKeyFromSeed(positionKeySeed(seed)) };
      // The fast path derives the key itself: it must be the very key position.ts derives.
      if (Buffer.compare(Buffer.from(known.key.publicKey), Buffer.from(known.fast.publicKey)) !== 0) {
        throw new Error('the fast VRF path derived a different position key');
      }
      this.keys.set(signing.kid, known);
    }
    return known;
  }
}
