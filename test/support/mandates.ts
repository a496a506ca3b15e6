/** Self-issued (did:key) mandates for the suites: a fresh agent key, and a mandate it signs. */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  didKeyFromPublicKey,
  MANDATE_TYP,
  rawPublicKey,
  type SigningKey,
  signCompact,
  signingKeyFromSeed,
} from '../../src/receipts/index.js';

export function freshAgentKey(): SigningKey {
  return signingKeyFromSeed(new Uint8Array(randomBytes(32)));
}

/**
 * A compact JWS mandate issued by the key's own did:key, for every room, to join, discuss and choose.
 * `expiresIn` seconds from now (negative: already expired); `weightCap`: its `svc.weight_cap`.
 */
export function selfIssuedMandate(
  signer: SigningKey,
  options: { sub?: string; expiresIn?: number; weightCap?: number } = {},
): string {
  const iss = didKeyFromPublicKey(rawPublicKey(signer.publicKey));
  const now = Math.floor(Date.now() / 1000);
  const expiresIn = options.expiresIn ?? 3600;
  return signCompact(
    { alg: 'EdDSA', kid: iss, typ: MANDATE_TYP },
    {
      iss,
      sub: options.sub ?? iss,
      jti: `urn:uuid:${randomUUID()}`,
      iat: Math.min(now, now + expiresIn - 60),
      exp: now + expiresIn,
      svc: {
        rooms: ['*'],
        actions: ['member_join_request', 'discuss', 'choose'],
        ...(options.weightCap !== undefined ? { weight_cap: options.weightCap } : {}),
      },
    },
    signer,
  );
}
