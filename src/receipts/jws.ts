import { createPublicKey, KeyObject, sign, verify } from 'node:crypto';
import { base64urlEncode } from './base64url.js';
import {
  checkJwsHeader,
  type DecodedJws,
  decodeCompact,
  type JoseHeader,
  JwsError,
  type JwsPayload,
  RECEIPT_TYP,
} from './compact.js';
import { receiptHash } from './hash.js';
import { canonicalJson } from './jcs.js';
import type { PublicJwk, SigningKey } from './keys.js';

export function receiptHeader(kid: string): { alg: 'EdDSA'; kid: string; typ: typeof RECEIPT_TYP } {
  return { alg: 'EdDSA', kid, typ: RECEIPT_TYP };
}

/** Compact JWS over the JCS forms of header and payload (docs/receipts.md); deterministic for equal inputs. */
export function signCompact(header: JoseHeader, payload: unknown, key: SigningKey): string {
  const signingInput = `${base64urlEncode(canonicalJson(header))}.${base64urlEncode(canonicalJson(payload))}`;
  const signature = sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey);
  return `${signingInput}.${base64urlEncode(signature)}`;
}

/** Verifies an EdDSA compact JWS of the given `typ` against one public key. */
export function verifyCompactJws(
  jws: string,
  publicKey: KeyObject | PublicJwk,
  options: { typ: string },
): { header: JoseHeader; payload: JwsPayload } {
  const decoded = decodeCompact(jws);
  const { header, payload } = decoded;
  const kid = checkJwsHeader(header, options.typ);
  if (!verifySignature(decoded, toEd25519PublicKey(publicKey))) {
    throw new JwsError('signature', `JWS signature does not verify with the key for kid ${kid}`);
  }
  return { header, payload };
}

/** `verifyCompactReceipt` (docs/receipts.md): strict parse, Ed25519 verification, optional hash comparison. */
export function verifyCompactReceipt(
  jws: string,
  publicKey: KeyObject | PublicJwk,
  expectedHash?: string,
): { header: JoseHeader; payload: JwsPayload } {
  const result = verifyCompactJws(jws, publicKey, { typ: RECEIPT_TYP });
  if (expectedHash !== undefined) {
    const actual = receiptHash(jws);
    if (actual !== expectedHash) throw new JwsError('hash', `receipt hash is ${actual}, expected ${expectedHash}`);
  }
  return result;
}

function verifySignature(decoded: DecodedJws, publicKey: KeyObject): boolean {
  if (decoded.signature.length !== 64) return false;
  return verify(null, Buffer.from(decoded.signingInput, 'ascii'), publicKey, decoded.signature);
}

function toEd25519PublicKey(key: KeyObject | PublicJwk): KeyObject {
  let keyObject: KeyObject;
  if (key instanceof KeyObject) {
    keyObject = key.type === 'private' ? createPublicKey(key) : key;
  } else {
    if (key.kty !== 'OKP' || key.crv !== 'Ed25519' || typeof key.x !== 'string') {
      throw new Error('verification key must be an OKP Ed25519 JWK');
    }
    keyObject = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.x }, format: 'jwk' });
  }
  if (keyObject.asymmetricKeyType !== 'ed25519') throw new Error('verification key must be an Ed25519 key');
  return keyObject;
}
