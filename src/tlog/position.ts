/**
 * A receipt's position label in the transparency log (docs/transparency-log.md): the first 32 bytes
 * of a VRF output over the receipt's signed room id and chain sequence. Unique for (room, position)
 * under one key, unguessable without the VRF proof, which only the room's readers get: so a member
 * finds its room's leaves and sees a second, different receipt at one position, and nobody else can
 * tell which leaves belong to one room.
 *
 * Browser-safe: the integrator labels with it, the client and the room page check labels with it.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { type VrfKey, vrfKeyFromSeed } from './vrf.js';

const POSITION_KEY_LABEL = 'conclave transparency log position key v1\n';
const POSITION_ALPHA_LABEL = 'conclave receipt position v1\n';
export const POSITION_LABEL_LENGTH = 32;

/**
 * The position key of a receipt signing key, derived from its 32-byte seed as the note key is
 * (src/tlog/note-signer.ts): replicas sharing the signing seed label alike, and the receipt key
 * itself never computes a VRF.
 */
export function positionKeyFor(receiptSigningSeed: Uint8Array): VrfKey {
  if (receiptSigningSeed.length !== 32) {
    throw new RangeError(`a receipt signing seed is 32 bytes, not ${receiptSigningSeed.length}`);
  }
  return vrfKeyFromSeed(sha256(concatBytes(new TextEncoder().encode(POSITION_KEY_LABEL), receiptSigningSeed)));
}

/** The VRF input for one chain position: the receipt's signed `svc.room_id` and `svc.sequence`. */
export function positionAlpha(roomId: string, sequence: number): Uint8Array {
  if (!Number.isSafeInteger(sequence) || sequence < 1) {
    throw new RangeError(`a receipt sequence is a positive integer, not ${sequence}`);
  }
  return new TextEncoder().encode(`${POSITION_ALPHA_LABEL}${roomId}\n${sequence}`);
}

/** The label a VRF output gives: its first 32 bytes. */
export function positionLabel(vrfOutput: Uint8Array): Uint8Array {
  return vrfOutput.slice(0, POSITION_LABEL_LENGTH);
}

/**
 * The position a receipt signs: its payload's `svc.room_id` and `svc.sequence`, read from the JWS
 * without checking the signature (the label and the commitment bind these exact bytes; whether the
 * service's key signed them is the receipt chain's check). Null when the JWS carries no position.
 */
export function signedPosition(jws: string): { roomId: string; sequence: number } | null {
  const payload = jws.split('.')[1];
  if (jws.split('.').length !== 3 || !payload || !/^[A-Za-z0-9_-]+$/.test(payload)) return null;
  try {
    const text = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const json = JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
    const svc = (json as { svc?: { room_id?: unknown; sequence?: unknown } } | null)?.svc;
    const { room_id: roomId, sequence } = svc ?? {};
    if (typeof roomId !== 'string' || typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) {
      return null;
    }
    return { roomId, sequence };
  } catch {
    return null;
  }
}
