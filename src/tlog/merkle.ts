/**
 * The Merkle tree of the transparency log, hashed as RFC 6962 / RFC 9162 define it:
 * leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right), and the tree over n leaves
 * splits at the largest power of two below n. Pure and browser-safe (pure-JS SHA-256), so the
 * client library verifies proofs with exactly the code the service builds them with.
 *
 * This is not `src/receipts/merkle.ts`: that one is the protocol's optional daily-root helper
 * (no domain separation, odd nodes paired with themselves) and keeps its own vectors.
 */
import { sha256 } from '@noble/hashes/sha2.js';

export type Hash = Uint8Array;

export const HASH_SIZE = 32;

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

export function leafHash(data: Uint8Array): Hash {
  return sha256.create().update(LEAF_PREFIX).update(data).digest();
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256.create().update(NODE_PREFIX).update(left).update(right).digest();
}

/** The root of the empty tree: SHA-256 of nothing. */
export function emptyRoot(): Hash {
  return sha256(new Uint8Array(0));
}

export function hashesEqual(a: Hash, b: Hash): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** The largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/**
 * Where a proof builder reads complete subtrees: the hash of the subtree of 2^level leaves starting
 * at leaf index × 2^level (level 0: the leaf hashes).
 */
export type NodeReader = ((level: number, index: number) => Hash) & {
  /**
   * Optional memo of ranges that are not one complete subtree (the right edge of a tree whose size
   * is not a power of two), keyed `lo:hi`. Such a range's hash never changes once its leaves exist,
   * so a reader serving many proofs for the same sizes computes each only once.
   */
  ranges?: Map<string, Hash>;
};

/** MTH over leaves [lo, hi), built from complete subtrees the reader holds. */
export function rangeHash(node: NodeReader, lo: number, hi: number): Hash {
  const n = hi - lo;
  if (n <= 0) throw new Error('a Merkle range needs at least one leaf');
  if (isPowerOfTwo(n) && lo % n === 0) return node(Math.log2(n), lo / n);
  const key = node.ranges ? `${lo}:${hi}` : '';
  const known = node.ranges?.get(key);
  if (known) return known;
  const k = splitPoint(n);
  const hash = nodeHash(rangeHash(node, lo, lo + k), rangeHash(node, lo + k, hi));
  node.ranges?.set(key, hash);
  return hash;
}

/** The tree head over the first `size` leaves. */
export function treeRoot(node: NodeReader, size: number): Hash {
  return size === 0 ? emptyRoot() : rangeHash(node, 0, size);
}

/** The root over a list of leaf hashes, recursively (for tests and small trees). */
export function rootOfLeafHashes(leaves: readonly Hash[]): Hash {
  return treeRoot((level, index) => rangeOfList(leaves, level, index), leaves.length);
}

function rangeOfList(leaves: readonly Hash[], level: number, index: number): Hash {
  if (level === 0) return leaves[index] as Hash;
  return nodeHash(rangeOfList(leaves, level - 1, index * 2), rangeOfList(leaves, level - 1, index * 2 + 1));
}

function assertSizes(condition: boolean, message: string): void {
  if (!condition) throw new RangeError(message);
}

/** RFC 6962 PATH(index, D[0:size]): the audit path of one leaf, leaf-side first. */
export function inclusionProof(node: NodeReader, index: number, size: number): Hash[] {
  assertSizes(Number.isSafeInteger(index) && index >= 0 && index < size, `leaf ${index} is not in a tree of ${size}`);
  const proof: Hash[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    const n = hi - lo;
    if (n === 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, lo, lo + k);
      proof.push(rangeHash(node, lo + k, hi));
    } else {
      walk(m - k, lo + k, hi);
      proof.push(rangeHash(node, lo, lo + k));
    }
  };
  walk(index, 0, size);
  return proof;
}

/** RFC 6962 PROOF(first, D[0:second]): shows the tree of `first` leaves is a prefix of `second`. */
export function consistencyProof(node: NodeReader, first: number, second: number): Hash[] {
  assertSizes(
    Number.isSafeInteger(first) && Number.isSafeInteger(second) && first >= 0 && first <= second,
    `no consistency proof from ${first} to ${second}`,
  );
  if (first === 0 || first === second) return [];
  const proof: Hash[] = [];
  const walk = (m: number, lo: number, hi: number, whole: boolean): void => {
    const n = hi - lo;
    if (m === n) {
      if (!whole) proof.push(rangeHash(node, lo, hi));
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      walk(m, lo, lo + k, whole);
      proof.push(rangeHash(node, lo + k, hi));
    } else {
      walk(m - k, lo + k, hi, false);
      proof.push(rangeHash(node, lo, lo + k));
    }
  };
  walk(first, 0, second, true);
  return proof;
}

/** RFC 9162 §2.1.3.2: does `proof` show `leaf` (a leaf hash) at `index` in the tree (`size`, `root`)? */
export function verifyInclusion(leaf: Hash, index: number, size: number, proof: readonly Hash[], root: Hash): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && hashesEqual(r, root);
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree (`first`, `firstRoot`) is a prefix of (`second`, `secondRoot`)? */
export function verifyConsistency(
  first: number,
  second: number,
  proof: readonly Hash[],
  firstRoot: Hash,
  secondRoot: Hash,
): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && hashesEqual(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Hash;
  let sr = path[0] as Hash;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && hashesEqual(fr, firstRoot) && hashesEqual(sr, secondRoot);
}
