import { loadVector } from '../../vectors/load.js';

export interface KeyVector {
  seed_hex: string;
  public_x: string;
  kid_rfc7638: string;
}

export interface ReceiptVectors {
  keys: {
    room: KeyVector & { kid_used_in_chain: string };
    minimal: KeyVector & { kid_used_in_jws: string };
  };
  header_canonical: string;
  chain: Array<{ sequence: number; jws: string; receipt_hash: string }>;
  minimal: { jws: string; payload_canonical: string; receipt_hash: string };
  did_key: { seed_hex: string; public_x: string; did: string };
  jcs_example: { input_js: string; output: string };
  merkle: Record<string, { leaves: string[]; root: string }>;
  audit_next_hash: Record<string, { prev: string | null; body: unknown; ts: string; hash: string }>;
}

/** The protocol's receipt vectors (test/vectors), read at run time so that tests never carry copies of the values. */
export const vectors: ReceiptVectors = loadVector<ReceiptVectors>('receipts.json');

export function seedBytes(hex: string): Uint8Array {
  return Buffer.from(hex, 'hex');
}
