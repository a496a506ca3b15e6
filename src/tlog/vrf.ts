/**
 * ECVRF-EDWARDS25519-SHA512-TAI, the verifiable random function of RFC 9381 (suite 0x03): for a key
 * and an input (alpha) there is exactly one output, only the secret key's holder can compute it, and
 * a proof lets anyone holding the public key check it. The transparency log uses it to label a
 * receipt's chain position (docs/transparency-log.md): the label is unguessable without the proof,
 * so an outsider cannot tell which leaves belong to one room, yet a member given the proof can find
 * its room's leaves and see two leaves at one position.
 *
 * Browser-safe (no node: imports): the room page and the client package verify with it. The curve
 * arithmetic is @noble/curves' edwards25519 (audited); only the VRF's own steps live here.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes } from '@noble/hashes/utils.js';

const Point = ed25519.Point;
type EdPoint = InstanceType<typeof Point> | ReturnType<(typeof Point)['fromBytes']>;

/** The group order q of edwards25519's prime subgroup. */
const ORDER = Point.CURVE().n;
const SUITE = 0x03;
/** Domain separators of the suite's four hashes (encode-to-curve, challenge, proof-to-hash, back). */
const ENCODE_FRONT = 0x01;
const CHALLENGE_FRONT = 0x02;
const PROOF_TO_HASH_FRONT = 0x03;
const BACK = 0x00;
/** The challenge is truncated to 16 bytes (cLen); Gamma and s take 32 each: 80 in all. */
const CHALLENGE_LENGTH = 16;
export const VRF_PROOF_LENGTH = 80;
export const VRF_OUTPUT_LENGTH = 64;
export const VRF_PUBLIC_KEY_LENGTH = 32;

export interface VrfKey {
  /** The 32-byte edwards25519 public key (Y = x·B), as RFC 8032 encodes it. */
  readonly publicKey: Uint8Array;
  /** 8 lowercase hex: the first 4 bytes of SHA-256(publicKey). Names the key in leaves and discovery. */
  readonly keyId: string;
  /** Deterministic: one alpha always gives the same proof and output. */
  prove(alpha: Uint8Array): { proof: Uint8Array; output: Uint8Array };
}

/** The key id of a VRF public key: the first 4 bytes of its SHA-256, lowercase hex. */
export function vrfKeyId(publicKey: Uint8Array): string {
  return bytesToHex(sha256(publicKey).subarray(0, 4));
}

/** A VRF key from a 32-byte secret seed, expanded as RFC 8032 expands an Ed25519 secret key. */
export function vrfKeyFromSeed(seed: Uint8Array): VrfKey {
  if (seed.length !== 32) throw new RangeError(`a VRF seed is 32 bytes, not ${seed.length}`);
  const { prefix, scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(seed);
  const publicKey = Uint8Array.from(pointBytes);
  return {
    publicKey,
    keyId: vrfKeyId(publicKey),
    prove(alpha) {
      const h = encodeToCurve(publicKey, alpha);
      // h lies in the prime-order subgroup (cofactor cleared), so x mod q acts as x does.
      const hBytes = h.toBytes();
      const gamma = h.multiply(scalar);
      const k = nonce(prefix, hBytes);
      const c = challenge(publicKey, hBytes, gamma, Point.BASE.multiply(k), h.multiply(k));
      const s = (k + c * scalar) % ORDER;
      const proof = concatBytes(gamma.toBytes(), numberToLE(c, CHALLENGE_LENGTH), numberToLE(s, 32));
      return { proof, output: outputOf(gamma) };
    },
  };
}

/**
 * The 64-byte output (beta) when `proof` is a valid proof for `alpha` under `publicKey`, else null.
 * Never throws on hostile bytes: a malformed key or proof is simply not valid.
 */
export function vrfVerify(publicKey: Uint8Array, alpha: Uint8Array, proof: Uint8Array): Uint8Array | null {
  if (publicKey.length !== VRF_PUBLIC_KEY_LENGTH) return null;
  const y = decodePoint(publicKey);
  // A small-order key would let its holder make many outputs verify for one alpha.
  if (y === null || y.isSmallOrder()) return null;
  const decoded = decodeProof(proof);
  if (decoded === null) return null;
  const { gamma, c, s } = decoded;
  const h = encodeToCurve(publicKey, alpha);
  const u = Point.BASE.multiplyUnsafe(s).subtract(y.multiplyUnsafe(c));
  const v = h.multiplyUnsafe(s).subtract(gamma.multiplyUnsafe(c));
  if (challenge(publicKey, h.toBytes(), gamma, u, v) !== c) return null;
  return outputOf(gamma);
}

/**
 * The output (beta) a proof commits to, without checking the proof: only a verified proof's output
 * means anything. Throws on bytes that are not a well-formed proof.
 */
export function vrfProofToOutput(proof: Uint8Array): Uint8Array {
  const decoded = decodeProof(proof);
  if (decoded === null) throw new Error('not a well-formed ECVRF-EDWARDS25519-SHA512-TAI proof');
  return outputOf(decoded.gamma);
}

/** Try-and-increment: hash (PK, alpha, counter) until the first 32 bytes decode to a curve point. */
function encodeToCurve(publicKey: Uint8Array, alpha: Uint8Array): EdPoint {
  for (let counter = 0; counter < 256; counter++) {
    const candidate = sha512(
      concatBytes(Uint8Array.of(SUITE, ENCODE_FRONT), publicKey, alpha, Uint8Array.of(counter, BACK)),
    ).subarray(0, 32);
    const point = decodePoint(candidate);
    if (point !== null) return point.clearCofactor();
  }
  // Each try succeeds with probability about 1/2: 256 failures do not happen.
  throw new Error('ECVRF encode-to-curve found no point in 256 tries');
}

/** RFC 8032 nonce: SHA-512 of the expanded key's second half and H, reduced mod q. */
function nonce(prefix: Uint8Array, hBytes: Uint8Array): bigint {
  return leToNumber(sha512(concatBytes(prefix, hBytes))) % ORDER;
}

function challenge(publicKey: Uint8Array, hBytes: Uint8Array, gamma: EdPoint, u: EdPoint, v: EdPoint): bigint {
  const digest = sha512(
    concatBytes(
      Uint8Array.of(SUITE, CHALLENGE_FRONT),
      publicKey,
      hBytes,
      gamma.toBytes(),
      u.toBytes(),
      v.toBytes(),
      Uint8Array.of(BACK),
    ),
  );
  return leToNumber(digest.subarray(0, CHALLENGE_LENGTH));
}

function outputOf(gamma: EdPoint): Uint8Array {
  return sha512(
    concatBytes(Uint8Array.of(SUITE, PROOF_TO_HASH_FRONT), gamma.clearCofactor().toBytes(), Uint8Array.of(BACK)),
  );
}

function decodeProof(proof: Uint8Array): { gamma: EdPoint; c: bigint; s: bigint } | null {
  if (proof.length !== VRF_PROOF_LENGTH) return null;
  const gamma = decodePoint(proof.subarray(0, 32));
  if (gamma === null) return null;
  const c = leToNumber(proof.subarray(32, 32 + CHALLENGE_LENGTH));
  const s = leToNumber(proof.subarray(32 + CHALLENGE_LENGTH));
  // A non-canonical s would give a second encoding of one proof.
  if (s >= ORDER) return null;
  return { gamma, c, s };
}

/** RFC 8032 point decoding, strict (y < p, no negative zero): null where it is not a point. */
function decodePoint(bytes: Uint8Array): EdPoint | null {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return null;
  }
}

function leToNumber(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return n;
}

function numberToLE(n: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let rest = n;
  for (let i = 0; i < length; i++) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}
