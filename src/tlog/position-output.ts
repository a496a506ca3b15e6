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
 * x·(8H), i.e. the point up to its sign; the sign is recovered with a second X25519 of 8H + B,
 * whose result is u(x·8H + A) with A the public key: only one of the two candidates matches it.
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

/** The output-only side of the VRF key `vrfKeyFromSeed(seed)` gives. */
export function fastVrfKeyFromSeed(seed: Uint8Array): FastVrfKey {
  const head = createHash('sha512').update(seed).digest().subarray(0, 32);
  const scalar = createPrivateKey({ key: Buffer.concat([PKCS8_X25519, head]), format: 'der', type: 'pkcs8' });
  const { pointBytes } = ed25519.utils.getExtendedPublicKey(seed);
  const publicKey = Uint8Array.from(pointBytes);
  const A = Point.fromBytes(publicKey);
  return {
    publicKey,
    output(alpha) {
      const h8 = encodeToCurve(publicKey, alpha).multiplyUnsafe(8n);
      const r = montgomeryToEdwards(times(scalar, montgomeryU(h8)));
      // r or -r is x·8H; x·(8H + B) = x·8H + A tells which.
      const check = times(scalar, montgomeryU(h8.add(Point.BASE)));
      const gamma8 = montgomeryU(r.add(A)) === check ? r : r.negate();
      return new Uint8Array(
        createHash('sha512')
          .update(Uint8Array.of(SUITE, PROOF_TO_HASH_FRONT))
          .update(gamma8.toBytes())
          .update(Uint8Array.of(BACK))
          .digest(),
      );
    },
  };
}

/** RFC 9381 try-and-increment encode-to-curve, cofactor cleared. */
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
    return point.clearCofactor();
  }
  throw new Error('ECVRF encode-to-curve found no point in 256 tries');
}

/** The Montgomery u of an Edwards point, (1 + y) / (1 − y), as a field element. */
function montgomeryU(point: EdPoint): bigint {
  return Fp.div(Fp.add(point.Z, point.Y), Fp.sub(point.Z, point.Y));
}

/** X25519(scalar, u): the u of scalar·P, by OpenSSL. (A JWK imports three times faster than DER.) */
function times(scalar: KeyObject, u: bigint): bigint {
  const point = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: toLE(u).toString('base64url') },
    format: 'jwk',
  });
  return fromLE(diffieHellman({ privateKey: scalar, publicKey: point }));
}

/** One of the two Edwards points with this Montgomery u (y = (u − 1) / (u + 1), x of sign 0). */
function montgomeryToEdwards(u: bigint): EdPoint {
  const y = Fp.div(Fp.sub(u, 1n), Fp.add(u, 1n));
  return Point.fromBytes(toLE(y), false);
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
