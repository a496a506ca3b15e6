/** Receipt verification with Node's crypto (the server side); the key-free checks live in chain.ts. */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { type ChainCheck, ed25519JwkFor, outcomeReceipts, receiptKid } from './chain.js';
import { verifyCompactReceipt } from './jws.js';

export {
  type BallotAttribution,
  ballotAttributions,
  type ChainCheck,
  receiptKid,
  verifyRoomReceiptChain,
} from './chain.js';

/** The Ed25519 key with this `kid` in a JWKS (see ed25519JwkFor), as a Node KeyObject. */
export function publicKeyFromJwks(doc: { keys: unknown[] }, kid: string): KeyObject {
  const jwk = ed25519JwkFor(doc, kid);
  return createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
}

/** Verifies the signature of every receipt in an `/outcome` body against a JWKS, by `kid`. */
export function verifyOutcomeSignatures(outcomeBody: unknown, jwks: { keys: unknown[] }): ChainCheck {
  const errors: string[] = [];
  for (const { label, entry } of outcomeReceipts(outcomeBody)) {
    try {
      if (typeof entry.receipt_jws !== 'string') throw new Error('receipt_jws is not a string');
      const key = publicKeyFromJwks(jwks, receiptKid(entry.receipt_jws));
      const expected = typeof entry.receipt_hash === 'string' ? entry.receipt_hash : undefined;
      verifyCompactReceipt(entry.receipt_jws, key, expected);
    } catch (error) {
      errors.push(`${label}: ${(error as Error).message}`);
    }
  }
  return { ok: errors.length === 0, errors };
}
