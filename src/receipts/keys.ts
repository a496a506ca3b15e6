import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from 'node:crypto';
import { base64urlEncode } from './base64url.js';
import { sha256Hex } from './jcs.js';

/** A key as published in the JWKS (docs/receipts.md). */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  alg: 'EdDSA';
  use: 'sig';
  kid: string;
  x: string;
}

/** A published key the service can verify with but may no longer sign with. */
export interface VerificationKey {
  kid: string;
  publicKey: KeyObject;
  jwk: PublicJwk;
}

export interface SigningKey extends VerificationKey {
  privateKey: KeyObject;
}

// DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** RFC 7638 thumbprint of an Ed25519 public key given as its base64url `x`. */
export function jwkThumbprint(x: string): string {
  // Members in lexicographic order, no whitespace, as RFC 7638 §3 requires.
  const digest = Buffer.from(sha256Hex(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`), 'hex');
  return base64urlEncode(digest);
}

export function publicJwk(x: string): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: jwkThumbprint(x), x };
}

export function verificationKeyFromX(x: string): VerificationKey {
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  // Normalise through the KeyObject so a non-canonical `x` cannot yield a second kid for one key.
  const canonicalX = rawPublicKey(publicKey);
  const jwk = publicJwk(base64urlEncode(canonicalX));
  if (jwk.x !== x) throw new Error('Ed25519 public key x is not canonical base64url');
  return { kid: jwk.kid, publicKey, jwk };
}

export function signingKeyFromSeed(seed: Uint8Array): SigningKey {
  if (seed.length !== 32) throw new Error(`Ed25519 seed must be 32 bytes, got ${seed.length}`);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const jwk = publicJwk(base64urlEncode(rawPublicKey(publicKey)));
  return { kid: jwk.kid, privateKey, publicKey, jwk };
}

export function generateSigningKey(): SigningKey {
  return signingKeyFromSeed(randomBytes(32));
}

/** The 32-byte seed of a signing key, for persisting it. */
export function seedOf(key: SigningKey): Uint8Array {
  const { d } = key.privateKey.export({ format: 'jwk' });
  if (typeof d !== 'string') throw new Error('not an Ed25519 private key');
  return Buffer.from(d, 'base64url');
}

/** The raw 32-byte Ed25519 public key. */
export function rawPublicKey(publicKey: KeyObject): Uint8Array {
  if (publicKey.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
  const { x } = publicKey.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('not an Ed25519 key');
  return Buffer.from(x, 'base64url');
}
