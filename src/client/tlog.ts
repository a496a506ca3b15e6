/**
 * Transparency-log verification for the client (docs/transparency-log.md), browser-safe: the
 * log's own Merkle and note code (pure JS SHA-256, WebCrypto Ed25519), nothing server-only.
 *
 * - `verifyCheckpoint(note, verifierKey)`: the C2SP signed note carries a valid signature by the
 *   log's key (from discovery's `audit_log.verifier_key`), and its body is a checkpoint of that origin.
 * - `verifyInclusion(leaf, index, proof, checkpoint)`: the leaf's exact bytes are leaf `index` of
 *   the checkpoint's tree.
 * - `verifyConsistency(older, newer, proof)`: the newer checkpoint's tree extends the older one's
 *   (a rollback or a fork fails).
 * - `verifyPositionLabel(receiptJws, position, positionKeys)`: a leaf's position label is the VRF
 *   output, under a position key discovery publishes, for the chain position the receipt signs.
 * - `verifyReceiptInLog(receiptJws, transparencyLogField, verifierKey, positionKeys)`: all of it for
 *   one `/outcome` row: the commitment leaf is rebuilt from the JWS and the proven label.
 *
 * The room-wide check (every leaf of a room, forks, receipts never shown) is in room-log.ts.
 */
import { type Hash, leafHash, verifyConsistency as consistent, verifyInclusion as included } from '../tlog/merkle.js';
import { fromBase64, noteSignedBy, parseCheckpoint, parseNote, parseVerifierKey, toBase64 } from '../tlog/note.js';
import { POSITION_LABEL_LENGTH, positionAlpha, signedPosition } from '../tlog/position.js';
import { receiptLeaf } from '../tlog/receipt-leaf.js';
import { vrfKeyId, vrfVerify } from '../tlog/vrf.js';

export interface VerifiedCheckpoint {
  origin: string;
  size: number;
  /** Root hash, standard base64 as the checkpoint writes it. */
  root: string;
  /** The exact note text that was verified. */
  note: string;
}

export class LogVerificationError extends Error {
  constructor(
    readonly failure: 'checkpoint' | 'inclusion' | 'consistency' | 'position',
    message: string,
  ) {
    super(message);
    this.name = 'LogVerificationError';
  }
}

export async function verifyCheckpoint(note: string, verifierKey: string): Promise<VerifiedCheckpoint> {
  try {
    const key = parseVerifierKey(verifierKey);
    const parsed = parseNote(note);
    if (!(await noteSignedBy(parsed, key))) {
      throw new Error(`no valid signature by ${key.name} on the checkpoint`);
    }
    const body = parseCheckpoint(parsed.text);
    if (body.origin !== key.name) throw new Error(`the checkpoint's origin ${body.origin} is not ${key.name}`);
    return { origin: body.origin, size: body.size, root: toBase64(body.root), note };
  } catch (error) {
    if (error instanceof LogVerificationError) throw error;
    throw new LogVerificationError('checkpoint', (error as Error).message);
  }
}

/**
 * Whether the checkpoint note carries a valid C2SP cosignature (tlog-cosignature/v1) by this
 * witness key (`<name>+<hex id>+<base64(0x04 ‖ key)>`, as discovery's `audit_log.witnesses` lists).
 */
export async function verifyCosignature(note: string, witnessKey: string): Promise<boolean> {
  try {
    return await noteSignedBy(parseNote(note), parseVerifierKey(witnessKey));
  } catch {
    return false;
  }
}

function hashesOf(proof: readonly (string | Uint8Array)[]): Hash[] {
  return proof.map((item) => (typeof item === 'string' ? fromBase64(item) : item));
}

/**
 * Whether `leaf` (the leaf data: its exact bytes; a string is taken as its UTF-8 bytes) is leaf
 * `index` of the checkpoint's tree. For the live log the leaf is a receipt's commitment leaf
 * (`receiptLeaf` from the JWS and its proven label); for the frozen v1 log it is the receipt JWS.
 */
export function verifyInclusion(
  leaf: string | Uint8Array,
  index: number,
  proof: readonly (string | Uint8Array)[],
  checkpoint: Pick<VerifiedCheckpoint, 'size' | 'root'>,
): boolean {
  try {
    const bytes = typeof leaf === 'string' ? new TextEncoder().encode(leaf) : leaf;
    return included(leafHash(bytes), index, checkpoint.size, hashesOf(proof), fromBase64(checkpoint.root));
  } catch {
    return false;
  }
}

/** Whether `newer` extends `older` (same history, more leaves). */
export function verifyConsistency(
  older: Pick<VerifiedCheckpoint, 'size' | 'root'>,
  newer: Pick<VerifiedCheckpoint, 'size' | 'root'>,
  proof: readonly (string | Uint8Array)[],
): boolean {
  try {
    return consistent(older.size, newer.size, hashesOf(proof), fromBase64(older.root), fromBase64(newer.root));
  } catch {
    return false;
  }
}

/** A position key as discovery lists it (`audit_log.position_keys`). */
export interface PositionKey {
  key_id: string;
  /** base64url of the 32-byte edwards25519 public key. */
  public_key: string;
}

/** A leaf's position label with its VRF proof, as `/outcome` and the member endpoint give it. */
export interface PositionProof {
  key_id: string;
  /** Standard base64 of the 32-byte label. */
  label: string;
  /** base64url of the 80-byte ECVRF proof. */
  proof: string;
}

/** The `transparency_log` field of an `/outcome` row. */
export interface LogInclusion {
  index: number;
  tree_size: number;
  checkpoint: string;
  inclusion_proof: string[];
  position: PositionProof;
}

/** Strict base64url (no padding), as the service writes keys and proofs. */
export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error('not base64url');
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  return fromBase64(padded);
}

/**
 * Discovery's position keys by key id. A key whose id is not the first 4 bytes of its SHA-256 is
 * refused: the id names the key in every leaf, so it must not be choosable.
 */
export function positionKeysById(keys: readonly PositionKey[]): Map<string, Uint8Array> {
  const byId = new Map<string, Uint8Array>();
  for (const key of keys) {
    let publicKey: Uint8Array;
    try {
      publicKey = fromBase64Url(key.public_key);
    } catch {
      throw new LogVerificationError('position', `position key ${key.key_id}: its public key is not base64url`);
    }
    if (publicKey.length !== 32 || vrfKeyId(publicKey) !== key.key_id) {
      throw new LogVerificationError('position', `position key ${key.key_id}: the id is not the key's`);
    }
    byId.set(key.key_id, publicKey);
  }
  return byId;
}

/**
 * Checks one label's VRF proof for a chain position and returns the 32-byte label. Throws
 * LogVerificationError('position') naming what is wrong: an unknown key, a proof that does not
 * verify for this room and sequence, or a label that is not the proof's output.
 */
export function verifyPositionProof(
  roomId: string,
  sequence: number,
  position: PositionProof,
  keys: ReadonlyMap<string, Uint8Array>,
): Uint8Array {
  const publicKey = keys.get(position.key_id);
  if (!publicKey) {
    throw new LogVerificationError(
      'position',
      `the label is by position key ${position.key_id}, which discovery does not list`,
    );
  }
  let proof: Uint8Array;
  let label: Uint8Array;
  try {
    proof = fromBase64Url(position.proof);
    label = fromBase64(position.label);
  } catch {
    throw new LogVerificationError('position', `the label or proof of sequence ${sequence} is not well-formed`);
  }
  const output = vrfVerify(publicKey, positionAlpha(roomId, sequence), proof);
  if (!output) {
    throw new LogVerificationError(
      'position',
      `the VRF proof of sequence ${sequence} does not verify under position key ${position.key_id} for ${roomId}`,
    );
  }
  const proven = output.slice(0, POSITION_LABEL_LENGTH);
  if (toBase64(proven) !== position.label || label.length !== POSITION_LABEL_LENGTH) {
    throw new LogVerificationError('position', `the label of sequence ${sequence} is not its proof's output`);
  }
  return proven;
}

/**
 * The position label of a receipt, proven: the VRF proof verifies for the room and sequence the
 * receipt SIGNS (not what a body around it says). Returns the label and the key id that made it.
 */
export function verifyPositionLabel(
  receiptJws: string,
  position: PositionProof,
  positionKeys: readonly PositionKey[] | ReadonlyMap<string, Uint8Array>,
): { keyId: string; label: Uint8Array } {
  const signed = signedPosition(receiptJws);
  if (!signed) throw new LogVerificationError('position', 'the receipt JWS signs no svc.room_id and svc.sequence');
  const keys = positionKeys instanceof Map ? positionKeys : positionKeysById(positionKeys as readonly PositionKey[]);
  return { keyId: position.key_id, label: verifyPositionProof(signed.roomId, signed.sequence, position, keys) };
}

/**
 * One `/outcome` row's log inclusion: the leaf is rebuilt from the receipt's JWS and its position
 * label (whose VRF proof is checked against discovery's position keys for the receipt's signed room
 * and sequence), and it is leaf `index` of a checkpoint the log's key signed.
 */
export async function verifyReceiptInLog(
  receiptJws: string,
  inclusion: LogInclusion,
  verifierKey: string,
  positionKeys: readonly PositionKey[] | ReadonlyMap<string, Uint8Array>,
): Promise<VerifiedCheckpoint> {
  if (!inclusion.position) {
    throw new LogVerificationError('position', 'the transparency_log field carries no position label');
  }
  const { keyId, label } = verifyPositionLabel(receiptJws, inclusion.position, positionKeys);
  const checkpoint = await verifyCheckpoint(inclusion.checkpoint, verifierKey);
  if (checkpoint.size !== inclusion.tree_size) {
    throw new LogVerificationError(
      'inclusion',
      `the proof claims size ${inclusion.tree_size}, the checkpoint ${checkpoint.size}`,
    );
  }
  if (!verifyInclusion(receiptLeaf(receiptJws, keyId, label), inclusion.index, inclusion.inclusion_proof, checkpoint)) {
    throw new LogVerificationError(
      'inclusion',
      `the receipt's commitment leaf is not leaf ${inclusion.index} of the checkpoint's tree`,
    );
  }
  return checkpoint;
}
