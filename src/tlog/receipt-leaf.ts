/**
 * The data of one transparency-log entry (docs/transparency-log.md): not the receipt, only an
 * unlinkable commitment to it, so the public log names no room, option, voter or statement.
 *
 *     conclave-receipt-commitment/v1\n
 *     <position key id: 8 lowercase hex>\n
 *     <base64(position label, 32 bytes)>\n
 *     <base64(SHA-256(the receipt's exact JWS bytes))>\n
 *
 * ASCII, standard padded base64. The integrator writes it, the client, the room page and the
 * auditor rebuild or parse it: one module, so they cannot drift. Browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { fromBase64, toBase64 } from './note.js';
import { POSITION_LABEL_LENGTH } from './position.js';

export const RECEIPT_LEAF_HEADER = 'conclave-receipt-commitment/v1';
const KEY_ID = /^[0-9a-f]{8}$/;
const COMMITMENT_LENGTH = 32;

export interface ReceiptLeaf {
  /** The position key that made the label (8 lowercase hex, as discovery's `position_keys` name it). */
  keyId: string;
  /** The receipt's position label: 32 bytes of VRF output. */
  label: Uint8Array;
  /** SHA-256 of the receipt's exact JWS bytes. */
  commitment: Uint8Array;
}

/** SHA-256 of a receipt's exact compact-JWS bytes: what a leaf commits to. */
export function receiptCommitment(jws: string): Uint8Array {
  return sha256(new TextEncoder().encode(jws));
}

/** The leaf bytes for a receipt labelled `label` by position key `keyId`. */
export function receiptLeaf(jws: string, keyId: string, label: Uint8Array): Uint8Array {
  if (!KEY_ID.test(keyId)) throw new RangeError(`a position key id is 8 lowercase hex, not ${JSON.stringify(keyId)}`);
  if (label.length !== POSITION_LABEL_LENGTH) {
    throw new RangeError(`a position label is ${POSITION_LABEL_LENGTH} bytes, not ${label.length}`);
  }
  return leafBytes(keyId, label, receiptCommitment(jws));
}

/** The leaf bytes for an already computed commitment (a monitor matching receipts it holds). */
export function leafBytes(keyId: string, label: Uint8Array, commitment: Uint8Array): Uint8Array {
  const text = `${RECEIPT_LEAF_HEADER}\n${keyId}\n${toBase64(label)}\n${toBase64(commitment)}\n`;
  return new TextEncoder().encode(text);
}

/**
 * The parts of a leaf, or null when the bytes are not exactly one well-formed commitment leaf
 * (another format, a frozen-log JWS leaf, extra lines, non-canonical base64, wrong lengths).
 */
export function parseReceiptLeaf(bytes: Uint8Array): ReceiptLeaf | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  const lines = text.split('\n');
  // Four lines, each ending in \n: five parts, the last one empty.
  if (lines.length !== 5 || lines[4] !== '' || lines[0] !== RECEIPT_LEAF_HEADER) return null;
  const [, keyId = '', labelText = '', commitmentText = ''] = lines;
  if (!KEY_ID.test(keyId)) return null;
  try {
    const label = fromBase64(labelText);
    const commitment = fromBase64(commitmentText);
    if (label.length !== POSITION_LABEL_LENGTH || commitment.length !== COMMITMENT_LENGTH) return null;
    return { keyId, label, commitment };
  } catch {
    return null;
  }
}
