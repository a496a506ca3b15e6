import { sha256Hex } from './jcs.js';

export const RECEIPT_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Hash of the exact JWS text as issued; never of a decoded and re-serialised form (docs/receipts.md). */
export function receiptHash(jws: string): string {
  return `sha256:${sha256Hex(jws)}`;
}
