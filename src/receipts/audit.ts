import { createHash } from 'node:crypto';
import { canonicalJson } from './jcs.js';

/** Next audit-chain hash (docs/receipts.md): hex SHA-256(raw prev ‖ JCS(body) ‖ ts), no prefix. */
export function nextAuditHash(prevHex: string | null, body: unknown, ts: string): string {
  const hash = createHash('sha256');
  if (prevHex !== null) {
    if (!/^[0-9a-fA-F]{64}$/.test(prevHex)) throw new Error('previous audit hash must be 64 hex characters');
    hash.update(Buffer.from(prevHex, 'hex'));
  }
  return hash.update(canonicalJson(body), 'utf8').update(ts, 'utf8').digest('hex');
}
