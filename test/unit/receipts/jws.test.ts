import { describe, expect, it } from 'vitest';
import {
  decodeCompact,
  generateSigningKey,
  JwsError,
  MANDATE_TYP,
  RECEIPT_TYP,
  receiptHash,
  receiptHeader,
  signCompact,
  signingKeyFromSeed,
  verifyCompactJws,
  verifyCompactReceipt,
} from '../../../src/receipts/index.js';
import { seedBytes, vectors } from './vectors.js';

const key = signingKeyFromSeed(seedBytes(vectors.keys.room.seed_hex));
const payload = { iss: 'https://room.example/r/x', svc: { sequence: 1, prev_hash: null } };
const good = signCompact(receiptHeader(key.kid), payload, key);

function segments(jws: string): [string, string, string] {
  return jws.split('.') as [string, string, string];
}

function failureOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(JwsError);
    return (error as JwsError).failure;
  }
  throw new Error('expected a failure');
}

/**
 * Same decoded bytes, different text: sets unused trailing bits of the last character, or, when the
 * segment has none, appends a dangling character that Node's decoder ignores.
 */
function nonCanonicalVariant(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const bytes = Buffer.from(segment, 'base64url');
  const candidates = [...alphabet].map((c) => segment.slice(0, -1) + c).concat(`${segment}A`);
  const variant = candidates.find((v) => v !== segment && Buffer.from(v, 'base64url').equals(bytes));
  if (!variant) throw new Error('no non-canonical variant found');
  return variant;
}

describe('signCompact', () => {
  it('produces an unpadded three-segment JWS whose header is the JCS header', () => {
    const [h] = segments(good);
    expect(good).not.toContain('=');
    expect(Buffer.from(h, 'base64url').toString()).toBe(`{"alg":"EdDSA","kid":"${key.kid}","typ":"svc-receipt+jwt"}`);
  });

  it('is deterministic', () => {
    expect(signCompact(receiptHeader(key.kid), { ...payload }, key)).toBe(good);
  });
});

describe('verifyCompactReceipt', () => {
  it('returns header and payload of a good receipt', () => {
    expect(verifyCompactReceipt(good, key.publicKey, receiptHash(good))).toEqual({
      header: receiptHeader(key.kid),
      payload,
    });
  });

  it('accepts the private KeyObject and the public JWK as key', () => {
    expect(() => verifyCompactReceipt(good, key.privateKey)).not.toThrow();
    expect(() => verifyCompactReceipt(good, key.jwk)).not.toThrow();
  });

  it('rejects a padded segment', () => {
    const [h, p, s] = segments(good);
    const padded = Buffer.from(h, 'base64url').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(padded).toMatch(/=$/);
    expect(failureOf(() => verifyCompactReceipt(`${padded}.${p}.${s}`, key.publicKey))).toBe('malformed');
    expect(failureOf(() => verifyCompactReceipt(`${h}.${p}.${s}==`, key.publicKey))).toBe('malformed');
  });

  it.each([0, 1, 2])('rejects non-canonical base64url in segment %i', (index) => {
    const parts = segments(good);
    parts[index] = nonCanonicalVariant(parts[index] as string);
    expect(failureOf(() => verifyCompactReceipt(parts.join('.'), key.publicKey))).toBe('malformed');
  });

  it('rejects characters outside the base64url alphabet', () => {
    const [h, p, s] = segments(good);
    for (const bad of [`${h}.${p}+.${s}`, `${h}.${p}/.${s}`, `${h}.${p} .${s}`, `${h}\n.${p}.${s}`]) {
      expect(failureOf(() => verifyCompactReceipt(bad, key.publicKey))).toBe('malformed');
    }
  });

  it.each([
    ['two segments', (h: string, p: string) => `${h}.${p}`],
    ['four segments', (h: string, p: string, s: string) => `${h}.${p}.${s}.${s}`],
    ['an empty payload', (h: string, _p: string, s: string) => `${h}..${s}`],
    ['an empty signature', (h: string, p: string) => `${h}.${p}.`],
  ])('rejects %s', (_name, build) => {
    const [h, p, s] = segments(good);
    expect(failureOf(() => verifyCompactReceipt(build(h, p, s), key.publicKey))).toBe('malformed');
  });

  it('rejects a header with crit, even when signed', () => {
    const jws = signCompact({ ...receiptHeader(key.kid), crit: ['exp'] }, payload, key);
    expect(() => verifyCompactReceipt(jws, key.publicKey)).toThrow(/crit/);
  });

  it.each([
    ['wrong typ', { typ: 'JWT' }],
    ['missing typ', { typ: undefined }],
    ['mandate typ', { typ: MANDATE_TYP }],
    ['wrong alg', { alg: 'ES256' }],
    ['alg none', { alg: 'none' }],
    ['missing kid', { kid: undefined }],
  ])('rejects a signed receipt with %s', (_name, change) => {
    const jws = signCompact({ ...receiptHeader(key.kid), ...change }, payload, key);
    expect(failureOf(() => verifyCompactReceipt(jws, key.publicKey))).toBe('malformed');
  });

  it('rejects a tampered payload', () => {
    const [h, , s] = segments(good);
    const forged = Buffer.from(JSON.stringify({ ...payload, iss: 'https://evil.example/r/x' })).toString('base64url');
    expect(failureOf(() => verifyCompactReceipt(`${h}.${forged}.${s}`, key.publicKey))).toBe('signature');
  });

  it('rejects a tampered signature and a wrong key', () => {
    const [h, p, s] = segments(good);
    const sig = Buffer.from(s, 'base64url');
    sig[0] = (sig[0] as number) ^ 1;
    expect(failureOf(() => verifyCompactReceipt(`${h}.${p}.${sig.toString('base64url')}`, key.publicKey))).toBe(
      'signature',
    );
    expect(failureOf(() => verifyCompactReceipt(good, generateSigningKey().publicKey))).toBe('signature');
  });

  it('rejects a signature of the wrong length', () => {
    const [h, p] = segments(good);
    expect(failureOf(() => verifyCompactReceipt(`${h}.${p}.AAAA`, key.publicKey))).toBe('signature');
  });

  it('rejects a wrong expected hash', () => {
    const other = `sha256:${'0'.repeat(64)}`;
    expect(failureOf(() => verifyCompactReceipt(good, key.publicKey, other))).toBe('hash');
  });

  it('rejects non-object and non-UTF-8 JSON', () => {
    const [h, , s] = segments(good);
    const array = Buffer.from('[1]').toString('base64url');
    const latin1 = Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url');
    expect(failureOf(() => verifyCompactReceipt(`${h}.${array}.${s}`, key.publicKey))).toBe('malformed');
    expect(failureOf(() => verifyCompactReceipt(`${h}.${latin1}.${s}`, key.publicKey))).toBe('malformed');
  });

  it('rejects a non-Ed25519 JWK', () => {
    expect(() => verifyCompactReceipt(good, { ...key.jwk, crv: 'X25519' as 'Ed25519' })).toThrow(/Ed25519/);
  });
});

describe('verifyCompactJws', () => {
  it('verifies another typ for the mandate verifier', () => {
    const mandate = signCompact({ alg: 'EdDSA', kid: key.kid, typ: MANDATE_TYP }, { sub: 'urn:svc:agent:a' }, key);
    expect(verifyCompactJws(mandate, key.jwk, { typ: MANDATE_TYP }).payload).toEqual({ sub: 'urn:svc:agent:a' });
    expect(() => verifyCompactJws(mandate, key.jwk, { typ: RECEIPT_TYP })).toThrow(/typ/);
    expect(() => verifyCompactJws(good, key.jwk, { typ: MANDATE_TYP })).toThrow(/typ/);
  });
});

describe('decodeCompact', () => {
  it('exposes the exact signing input and the signature bytes', () => {
    const [h, p, s] = segments(good);
    const decoded = decodeCompact(good);
    expect(decoded.signingInput).toBe(`${h}.${p}`);
    expect(Buffer.from(decoded.signature).toString('base64url')).toBe(s);
  });
});
