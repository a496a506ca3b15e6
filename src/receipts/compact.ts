/**
 * Compact JWS parsing (docs/receipts.md) and the header rules every receipt and mandate follows. Pure: shared
 * by the server (signing, mandate verification) and the browser-safe client library.
 */
import { base64urlDecodeStrict } from './base64url.js';

export const RECEIPT_TYP = 'svc-receipt+jwt';
export const MANDATE_TYP = 'svc-mandate+jwt';

export type JoseHeader = Record<string, unknown>;
export type JwsPayload = Record<string, unknown>;

/**
 * Why a JWS was refused. `malformed` covers the parse rules of docs/receipts.md and `alg`/`typ`/`crit`; the
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

/** Parses a compact JWS with the strictness rules of docs/receipts.md, without checking the signature. */
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

/** alg EdDSA, the expected typ, a non-empty kid: the header rules checked before any signature. */
export function checkJwsHeader(header: JoseHeader, typ: string): string {
  if (header.alg !== 'EdDSA') throw new JwsError('malformed', `JWS alg must be EdDSA, got ${describe(header.alg)}`);
  if (header.typ !== typ) throw new JwsError('malformed', `JWS typ must be ${typ}, got ${describe(header.typ)}`);
  if (typeof header.kid !== 'string' || header.kid === '') {
    throw new JwsError('malformed', 'JWS header must carry a non-empty kid');
  }
  return header.kid;
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
