/**
 * ECVRF-EDWARDS25519-SHA512-TAI (src/tlog/vrf.ts): RFC 9381's own example vectors, byte for byte,
 * and the forgeries a log position label must resist: a proof that is changed, moved to another
 * input or another key, re-encoded, or made under a degenerate key does not verify.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes as concat, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { VRF_PROOF_LENGTH, vrfKeyFromSeed, vrfKeyId, vrfProofToOutput, vrfVerify } from '../../../src/tlog/vrf.js';

interface Vector {
  example: number;
  sk: string;
  pk: string;
  alpha: string;
  pi: string;
  beta: string;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../../vectors/rfc9381/ecvrf-edwards25519-sha512-tai.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

const seed = (byte: number) => new Uint8Array(32).fill(byte);
const text = (s: string) => new TextEncoder().encode(s);

describe('RFC 9381 Appendix B.3 vectors', () => {
  it('carries all three examples', () => {
    expect(vectors.map((v) => v.example)).toEqual([16, 17, 18]);
  });

  for (const v of vectors) {
    it(`example ${v.example}: the key, proof and output are the RFC's`, () => {
      const key = vrfKeyFromSeed(hexToBytes(v.sk));
      expect(bytesToHex(key.publicKey)).toBe(v.pk);
      const { proof, output } = key.prove(hexToBytes(v.alpha));
      expect(bytesToHex(proof)).toBe(v.pi);
      expect(bytesToHex(output)).toBe(v.beta);
    });

    it(`example ${v.example}: the RFC's proof verifies to the RFC's output`, () => {
      const output = vrfVerify(hexToBytes(v.pk), hexToBytes(v.alpha), hexToBytes(v.pi));
      expect(output && bytesToHex(output)).toBe(v.beta);
      expect(bytesToHex(vrfProofToOutput(hexToBytes(v.pi)))).toBe(v.beta);
    });
  }
});

describe('forgeries do not verify', () => {
  const key = vrfKeyFromSeed(seed(7));
  const alpha = text('conclave receipt position v1\nhttps://rooms.example/r/abc\n3');
  const { proof } = key.prove(alpha);

  it('an honest proof verifies (the baseline the forgeries change)', () => {
    expect(vrfVerify(key.publicKey, alpha, proof)).not.toBeNull();
  });

  it('a proof with any one byte changed (Gamma, c or s)', () => {
    for (const at of [0, 17, 31, 32, 40, 47, 48, 60, 79]) {
      const tampered = Uint8Array.from(proof);
      tampered[at] = (tampered[at] as number) ^ 0x01;
      expect(vrfVerify(key.publicKey, alpha, tampered), `byte ${at}`).toBeNull();
    }
  });

  it('a proof for another input (another room or position)', () => {
    expect(
      vrfVerify(key.publicKey, text('conclave receipt position v1\nhttps://rooms.example/r/abc\n4'), proof),
    ).toBeNull();
    expect(
      vrfVerify(key.publicKey, text('conclave receipt position v1\nhttps://rooms.example/r/abd\n3'), proof),
    ).toBeNull();
  });

  it('a proof presented under another key', () => {
    expect(vrfVerify(vrfKeyFromSeed(seed(8)).publicKey, alpha, proof)).toBeNull();
  });

  it('a second encoding of s (s + q): one proof, one byte string', () => {
    const q = ed25519.Point.CURVE().n;
    let s = 0n;
    for (let i = 79; i >= 48; i--) s = (s << 8n) | BigInt(proof[i] as number);
    let bumped = s + q;
    const reencoded = Uint8Array.from(proof);
    for (let i = 48; i < 80; i++) {
      reencoded[i] = Number(bumped & 0xffn);
      bumped >>= 8n;
    }
    expect(vrfVerify(key.publicKey, alpha, reencoded)).toBeNull();
  });

  it('a small-order public key (the identity: a proof for any input, without any secret)', () => {
    // Y = identity and Gamma = identity: c·Y and c·Gamma vanish, so s = k solves both equations
    // for whatever c the hash gives. Without the key check this forgery verifies.
    const Point = ed25519.Point;
    const identity = Point.ZERO.toBytes();
    const forgedAlpha = text('any position at all');
    const h = encodeToCurveForTest(identity, forgedAlpha);
    const k = 12345n;
    const c = challengeForTest(identity, h.toBytes(), Point.ZERO, Point.BASE.multiply(k), h.multiply(k));
    const forged = concat(identity, le(c, 16), le(k, 32));
    expect(vrfVerify(identity, forgedAlpha, forged)).toBeNull();
    // Another small-order point (order 2: y = −1) is refused alike.
    const orderTwo = new Uint8Array(32).fill(0xff);
    orderTwo[0] = 0xec;
    orderTwo[31] = 0x7f;
    expect(Point.fromBytes(orderTwo).isSmallOrder()).toBe(true);
    expect(vrfVerify(orderTwo, forgedAlpha, forged)).toBeNull();
  });

  it('malformed keys and proofs are refused without throwing', () => {
    expect(vrfVerify(key.publicKey.subarray(0, 31), alpha, proof)).toBeNull();
    expect(vrfVerify(new Uint8Array(32).fill(0xff), alpha, proof)).toBeNull();
    expect(vrfVerify(key.publicKey, alpha, proof.subarray(0, 79))).toBeNull();
    expect(vrfVerify(key.publicKey, alpha, new Uint8Array(VRF_PROOF_LENGTH).fill(0xff))).toBeNull();
    expect(() => vrfProofToOutput(new Uint8Array(12))).toThrow(/well-formed/);
  });
});

describe('uniqueness', () => {
  it('prove is deterministic: one key and input, one proof and one output', () => {
    const alpha = text('position');
    const a = vrfKeyFromSeed(seed(9)).prove(alpha);
    const b = vrfKeyFromSeed(seed(9)).prove(alpha);
    expect(bytesToHex(a.proof)).toBe(bytesToHex(b.proof));
    expect(bytesToHex(a.output)).toBe(bytesToHex(b.output));
    expect(bytesToHex(vrfProofToOutput(a.proof))).toBe(bytesToHex(a.output));
  });

  it('different inputs and different keys give different outputs', () => {
    const one = vrfKeyFromSeed(seed(9));
    const outputs = new Set([
      bytesToHex(one.prove(text('a')).output),
      bytesToHex(one.prove(text('b')).output),
      bytesToHex(vrfKeyFromSeed(seed(10)).prove(text('a')).output),
    ]);
    expect(outputs.size).toBe(3);
  });

  it('the key id is the first 4 bytes of SHA-256(public key), lowercase hex', () => {
    const key = vrfKeyFromSeed(hexToBytes(vectors[0]?.sk ?? ''));
    expect(key.keyId).toMatch(/^[0-9a-f]{8}$/);
    expect(key.keyId).toBe(vrfKeyId(key.publicKey));
    expect(key.keyId).toBe(createHash('sha256').update(key.publicKey).digest('hex').slice(0, 8));
  });
});

/** The suite's encode-to-curve and challenge, written out again here so a forgery can be built. */
function encodeToCurveForTest(publicKey: Uint8Array, alpha: Uint8Array) {
  for (let ctr = 0; ctr < 256; ctr++) {
    const candidate = sha512(concat(Uint8Array.of(3, 1), publicKey, alpha, Uint8Array.of(ctr, 0))).subarray(0, 32);
    try {
      return ed25519.Point.fromBytes(candidate).clearCofactor();
    } catch {}
  }
  throw new Error('unreachable');
}

type P = ReturnType<typeof ed25519.Point.fromBytes>;
function challengeForTest(publicKey: Uint8Array, h: Uint8Array, gamma: P, u: P, v: P): bigint {
  const digest = sha512(
    concat(Uint8Array.of(3, 2), publicKey, h, gamma.toBytes(), u.toBytes(), v.toBytes(), Uint8Array.of(0)),
  );
  let c = 0n;
  for (let i = 15; i >= 0; i--) c = (c << 8n) | BigInt(digest[i] as number);
  return c;
}

function le(n: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0, rest = n; i < length; i++, rest >>= 8n) out[i] = Number(rest & 0xffn);
  return out;
}
