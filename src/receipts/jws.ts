import { createPublicKey, KeyObject, sign, verify } from 'node:crypto';
import { base64urlDecodeStrict, base64urlEncode } from './base64url.js';
import { receiptHash } from './hash.js';
import { canonicalJson } from './jcs.js';
import type { PublicJwk, SigningKey } from './keys.js';

export const RECEIPT_TYP = 'svc-receipt+jwt';
export const MANDATE_TYP = 'svc-mandate+jwt';

export type JoseHeader = Record<string, unknown>;
export type JwsPayload = Record<string, unknown>;

/**
 * Why a JWS was refused. `malformed` covers the parse rules of 05 §1.2 and `alg`/`typ`/`crit`; the
 * mandate verifier maps it to `mandate.malformed` and `signature` to `mandate.signature_invalid`.
 */
export type JwsFailure = 'malformed' | 'signature' | 'hash';

export class JwsError extends Error {
  constructor(
    readonly failure: JwsFailure,
    message: string,
  ) {
    super(message);
    this.name = 'JwsError';
  }
}

export interface DecodedJws {
  header: JoseHeader;
  payload: JwsPayload;
  /** ASCII `<b64url header>.<b64url payload>` exactly as received. */
  signingInput: string;
  signature: Uint8Array;
}

export function receiptHeader(kid: string): { alg: 'EdDSA'; kid: string; typ: typeof RECEIPT_TYP } {
  return { alg: 'EdDSA', kid, typ: RECEIPT_TYP };
}

/** Compact JWS over the JCS forms of header and payload (05 §1); deterministic for equal inputs. */
export function signCompact(header: JoseHeader, payload: unknown, key: SigningKey): string {
  const signingInput = `${base64urlEncode(canonicalJson(header))}.${base64urlEncode(canonicalJson(payload))}`;
  const signature = sign(null, Buffer.from(signingInput, 'ascii'), key.privateKey);
  return `${signingInput}.${base64urlEncode(signature)}`;
}

/** Parses a compact JWS with the strictness rules of 05 §1.2, without checking the signature. */
export function decodeCompact(jws: string): DecodedJws {
  if (typeof jws !== 'string') throw new JwsError('malformed', 'JWS must be a string');
  const segments = jws.split('.');
  if (segments.length !== 3) {
    throw new JwsError('malformed', `JWS must have exactly three segments, found ${segments.length}`);
  }
  const [headerSegment, payloadSegment, signatureSegment] = segments as [string, string, string];
  const header = decodeJsonObject(headerSegment, 'header');
  const payload = decodeJsonObject(payloadSegment, 'payload');
  const signature = decodeSegment(signatureSegment, 'signature');
  if (Object.hasOwn(header, 'crit')) throw new JwsError('malformed', 'JWS header must not contain crit');
  return { header, payload, signingInput: `${headerSegment}.${payloadSegment}`, signature };
}

/** Verifies an EdDSA compact JWS of the given `typ` against one public key. */
export function verifyCompactJws(
  jws: string,
  publicKey: KeyObject | PublicJwk,
  options: { typ: string },
): { header: JoseHeader; payload: JwsPayload } {
  const decoded = decodeCompact(jws);
  const { header, payload } = decoded;
  if (header.alg !== 'EdDSA') throw new JwsError('malformed', `JWS alg must be EdDSA, got ${describe(header.alg)}`);
  if (header.typ !== options.typ) {
    throw new JwsError('malformed', `JWS typ must be ${options.typ}, got ${describe(header.typ)}`);
  }
  if (typeof header.kid !== 'string' || header.kid === '') {
    throw new JwsError('malformed', 'JWS header must carry a non-empty kid');
  }
  if (!verifySignature(decoded, toEd25519PublicKey(publicKey))) {
    throw new JwsError('signature', `JWS signature does not verify with the key for kid ${header.kid}`);
  }
  return { header, payload };
}

/** 05 §9 `verifyCompactReceipt`: strict parse, Ed25519 verification, optional hash comparison. */
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

function decodeSegment(segment: string, name: string): Uint8Array {
  if (segment === '') throw new JwsError('malformed', `JWS ${name} segment is empty`);
  try {
    return base64urlDecodeStrict(segment);
  } catch (error) {
    throw new JwsError('malformed', `JWS ${name} segment: ${(error as Error).message}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeJsonObject(segment: string, name: string): Record<string, unknown> {
  const bytes = decodeSegment(segment, name);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new JwsError('malformed', `JWS ${name} is not UTF-8 JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new JwsError('malformed', `JWS ${name} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
