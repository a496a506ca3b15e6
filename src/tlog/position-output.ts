/**
 * The VRF output alone, fast, for the integrator (docs/transparency-log.md, Costs). Labelling a
 * leaf needs only the output, which depends only on Gamma = x·H; the proof (two more scalar
 * multiplications and a challenge) is computed only when a member or /outcome asks for it
 * (vrf.ts, PositionLabels.prove). The one scalar multiplication left is done by OpenSSL's X25519
 * through node:crypto instead of in JavaScript: about ten times faster, which is what lets the
 * integrator label ten thousand receipts within the scale test's five seconds.
 *
 * Why X25519 gives the same point: the VRF's secret scalar is RFC 8032's, the clamped first half of
 * SHA-512(seed), and X25519 clamps its scalar the same way; H is in the prime-order subgroup, so
 * the clamped scalar and the scalar mod q act alike. X25519 returns only the Montgomery u of
 * R = x·(8H), i.e. the point up to its sign; a second X25519, of 8H + B, gives u(R + A) with A the
 * public key, and with A known in full the addition law yields R's v without a square root.
 *
 * test/unit/tlog/position-output.test.ts checks the output against vrf.ts's prove for many inputs.
 */
import { createHash, createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';

const Point = ed25519.Point;
type EdPoint = ReturnType<(typeof Point)['fromBytes']>;
const Fp = Point.Fp;

/** RFC 9381's suite string of ECVRF-EDWARDS25519-SHA512-TAI, and its domain separators. */
const SUITE = 0x03;
const ENCODE_FRONT = 0x01;
const PROOF_TO_HASH_FRONT = 0x03;
const BACK = 0x00;

/** The DER wrapper of a raw X25519 private key (RFC 8410, PKCS#8). */
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');

export interface FastVrfKey {
  publicKey: Uint8Array;
  /** The 64-byte VRF output for `alpha`, equal to what prove(alpha) returns. */
  output(alpha: Uint8Array): Uint8Array;
}

/** The seed of a receipt signing key's position key, as position.ts's positionKeyFor derives it. */
export function positionKeySeed(receiptSigningSeed: Uint8Array): Uint8Array {
  return new Uint8Array(
    createHash('sha256').update('conclave transparency log position key v1\n').update(receiptSigningSeed).digest(),
  );
}

/** curve25519's Montgomery coefficient A (v² = u³ + A·u² + u). */
const MONTGOMERY_A = 486662n;
/** A square root of −(A + 2): the birational map's constant, x = c·u / v (RFC 7748). Either root serves, used both ways. */
const MAP_C = Fp.sqrt(Fp.neg(MONTGOMERY_A + 2n));

/** The output-only side of the VRF key `vrfKeyFromSeed(seed)` gives. */
export function fastVrfKeyFromSeed(seed: Uint8Array): FastVrfKey {
  const head = createHash('sha512').update(seed).digest().subarray(0, 32);
  const scalar = createPrivateKey({ key: Buffer.concat([PKCS8_X25519, head]), format: 'der', type: 'pkcs8' });
  const { pointBytes } = ed25519.utils.getExtendedPublicKey(seed);
  const publicKey = Uint8Array.from(pointBytes);
  // The public key A = x·B on the Montgomery curve, with its v: the known point of the y-recovery.
  const a = Point.fromBytes(publicKey).toAffine();
  const uA = Fp.div(Fp.add(1n, a.y), Fp.sub(1n, a.y));
  const vA = Fp.div(Fp.mul(MAP_C, uA), a.x);
  const vA2 = curveRight(uA);
  const inv2vA = Fp.inv(Fp.add(vA, vA));
  return {
    publicKey,
    output(alpha) {
      // 8H: three doublings of H (the cofactor cleared on the way in: 64 times the decoded point).
      const h8 = encodeToCurve(publicKey, alpha).double().double().double();
      const [u8H, u8HB] = montgomeryUs(h8, h8.add(Point.BASE));
      // u of R = x·8H, and u of R + A = x·(8H + B): two X25519s.
      const uR = times(scalar, u8H);
      const uS = times(scalar, u8HB);
      // R's v from the addition law with the known A, no square root: (vR − vA)² =
      // (uS + A + uR + uA)(uR − uA)², and vR² is the curve's right-hand side at uR.
      const sum = Fp.mul(Fp.add(Fp.add(uS, MONTGOMERY_A), Fp.add(uR, uA)), Fp.sqr(Fp.sub(uR, uA)));
      const vR = Fp.mul(Fp.sub(Fp.add(curveRight(uR), vA2), sum), inv2vA);
      // Back to Edwards: y = (u − 1)/(u + 1), x = c·u/v, one inversion for both.
      const inverse = Fp.inv(Fp.mul(Fp.add(uR, 1n), vR));
      const y = Fp.mul(Fp.mul(Fp.sub(uR, 1n), vR), inverse);
      const x = Fp.mul(Fp.mul(Fp.mul(MAP_C, uR), Fp.add(uR, 1n)), inverse);
      const gamma8 = toLE(y);
      gamma8[31] = ((gamma8[31] as number) & 0x7f) | (Number(x & 1n) << 7);
      return new Uint8Array(
        createHash('sha512')
          .update(Uint8Array.of(SUITE, PROOF_TO_HASH_FRONT))
          .update(gamma8)
          .update(Uint8Array.of(BACK))
          .digest(),
      );
    },
  };
}

/** v² on curve25519 at u: u³ + A·u² + u. */
function curveRight(u: bigint): bigint {
  const u2 = Fp.sqr(u);
  return Fp.add(Fp.add(Fp.mul(u2, u), Fp.mul(MONTGOMERY_A, u2)), u);
}

/** RFC 9381 try-and-increment encode-to-curve, cofactor cleared (three doublings). */
function encodeToCurve(publicKey: Uint8Array, alpha: Uint8Array): EdPoint {
  for (let counter = 0; counter < 256; counter++) {
    const candidate = createHash('sha512')
      .update(Uint8Array.of(SUITE, ENCODE_FRONT))
      .update(publicKey)
      .update(alpha)
      .update(Uint8Array.of(counter, BACK))
      .digest()
      .subarray(0, 32);
    let point: EdPoint;
    try {
      point = Point.fromBytes(candidate, false);
    } catch {
      continue;
    }
    return point.double().double().double();
  }
  throw new Error('ECVRF encode-to-curve found no point in 256 tries');
}

/** The Montgomery u, (1 + y) / (1 − y) = (Z + Y) / (Z − Y), of two Edwards points, with one inversion. */
function montgomeryUs(p: EdPoint, q: EdPoint): [bigint, bigint] {
  const dp = Fp.sub(p.Z, p.Y);
  const dq = Fp.sub(q.Z, q.Y);
  const inverse = Fp.inv(Fp.mul(dp, dq));
  return [Fp.mul(Fp.mul(Fp.add(p.Z, p.Y), dq), inverse), Fp.mul(Fp.mul(Fp.add(q.Z, q.Y), dp), inverse)];
}

/** X25519(scalar, u): the u of scalar·P, by OpenSSL. (A JWK imports three times faster than DER.) */
function times(scalar: KeyObject, u: bigint): bigint {
  const point = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: toLE(u).toString('base64url') },
    format: 'jwk',
  });
  return fromLE(diffieHellman({ privateKey: scalar, publicKey: point }));
}

function toLE(n: bigint): Buffer {
  const out = Buffer.alloc(32);
  let rest = n;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

function fromLE(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return n;
}
