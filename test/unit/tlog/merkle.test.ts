/**
 * The transparency log's Merkle core against the RFC 6962 test vectors that Certificate
 * Transparency implementations share (8 leaves), checked twice: typed-in expected hashes, and an
 * independent recursive MTH written here with node:crypto. Then a property test over random sizes.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  type Hash,
  inclusionProof,
  leafHash,
  type NodeReader,
  rootOfLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from '../../../src/tlog/merkle.js';
import { MerkleTree } from '../../../src/tlog/tree.js';

const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  (hex) => Buffer.from(hex, 'hex'),
);

const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

const INCLUSION: { index: number; size: number; path: string[] }[] = [
  { index: 0, size: 1, path: [] },
  {
    index: 0,
    size: 8,
    path: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    path: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, path: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    path: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];

const CONSISTENCY: { first: number; second: number; path: string[] }[] = [
  { first: 1, second: 1, path: [] },
  {
    first: 1,
    second: 8,
    path: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    first: 6,
    second: 8,
    path: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    first: 2,
    second: 5,
    path: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];

const hex = (hash: Hash) => Buffer.from(hash).toString('hex');
const unhex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

/** RFC 6962 §2.1 MTH, written from the RFC with node:crypto: the independent computation. */
function referenceRoot(data: Buffer[]): string {
  const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
  const mth = (d: Buffer[]): Buffer => {
    if (d.length === 0) return sha();
    if (d.length === 1) return sha(Buffer.from([0]), d[0] as Buffer);
    let k = 1;
    while (k * 2 < d.length) k *= 2;
    return sha(Buffer.from([1]), mth(d.slice(0, k)), mth(d.slice(k)));
  };
  return mth(data).toString('hex');
}

/** A reader over a full list of leaf hashes (every complete subtree computed on demand). */
function readerOf(leaves: Hash[]): NodeReader {
  const read: NodeReader = (level, index) =>
    level === 0 ? (leaves[index] as Hash) : rootOfLeafHashes(leaves.slice(index << level, (index + 1) << level));
  return read;
}

const hashes = LEAVES.map((leaf) => leafHash(leaf));

describe('RFC 6962 test vectors', () => {
  it('tree heads for 0–8 leaves match the published roots and an independent MTH', () => {
    for (let size = 0; size <= 8; size++) {
      expect(hex(treeRoot(readerOf(hashes), size))).toBe(ROOTS[size]);
      expect(referenceRoot(LEAVES.slice(0, size))).toBe(ROOTS[size]);
    }
  });

  it('inclusion proofs match and verify', () => {
    for (const { index, size, path } of INCLUSION) {
      const proof = inclusionProof(readerOf(hashes), index, size);
      expect(proof.map(hex)).toEqual(path);
      expect(verifyInclusion(hashes[index] as Hash, index, size, path.map(unhex), unhex(ROOTS[size] as string))).toBe(
        true,
      );
    }
  });

  it('consistency proofs match and verify', () => {
    for (const { first, second, path } of CONSISTENCY) {
      const proof = consistencyProof(readerOf(hashes), first, second);
      expect(proof.map(hex)).toEqual(path);
      const ok = verifyConsistency(
        first,
        second,
        path.map(unhex),
        unhex(ROOTS[first] as string),
        unhex(ROOTS[second] as string),
      );
      expect(ok).toBe(true);
    }
  });
});

/** Small deterministic PRNG (mulberry32): the property test is reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function flipBit(hash: Hash, bit: number): Hash {
  const copy = new Uint8Array(hash);
  copy[bit >> 3] = (copy[bit >> 3] as number) ^ (1 << (bit & 7));
  return copy;
}

describe('property: every proof verifies, every one-bit change fails', () => {
  const random = prng(0x7106);
  const sizes = [1, 2, 3, 7, 8, 9, 255, 256, 257, ...Array.from({ length: 12 }, () => 1 + Math.floor(random() * 600))];

  it.each(sizes)('tree of %i leaves', (size) => {
    const data = Array.from({ length: size }, (_, i) => Buffer.from(`leaf ${size}/${i}`));
    const leaves = data.map((d) => leafHash(d));
    const read = readerOf(leaves);
    // The node reader answers complete subtrees from a cache, as the service's tree does.
    const cache = new Map<string, Hash>();
    const cached: NodeReader = (level, index) => {
      const key = `${level}/${index}`;
      const hash = cache.get(key) ?? read(level, index);
      cache.set(key, hash);
      return hash;
    };
    const roots = Array.from({ length: size + 1 }, (_, n) => treeRoot(cached, n));
    expect(hex(roots[size] as Hash)).toBe(referenceRoot(data));
    const indices =
      size <= 16 ? [...Array(size).keys()] : Array.from({ length: 16 }, () => Math.floor(random() * size));
    for (const index of indices) {
      const proof = inclusionProof(cached, index, size);
      expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(size)));
      const root = roots[size] as Hash;
      expect(verifyInclusion(leaves[index] as Hash, index, size, proof, root)).toBe(true);
      const bit = Math.floor(random() * 256);
      expect(verifyInclusion(flipBit(leaves[index] as Hash, bit), index, size, proof, root)).toBe(false);
      expect(verifyInclusion(leaves[index] as Hash, index, size, proof, flipBit(root, bit))).toBe(false);
      for (let p = 0; p < proof.length; p++) {
        const bad = proof.map((h, i) => (i === p ? flipBit(h, Math.floor(random() * 256)) : h));
        expect(verifyInclusion(leaves[index] as Hash, index, size, bad, root)).toBe(false);
      }
      if (size > 1) expect(verifyInclusion(leaves[index] as Hash, (index + 1) % size, size, proof, root)).toBe(false);
    }
    const firsts =
      size <= 16 ? [...Array(size + 1).keys()] : Array.from({ length: 16 }, () => Math.floor(random() * (size + 1)));
    for (const first of firsts) {
      const proof = consistencyProof(cached, first, size);
      expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(Math.max(size, 2))) + 1);
      const [a, b] = [roots[first] as Hash, roots[size] as Hash];
      expect(verifyConsistency(first, size, proof, a, b)).toBe(true);
      if (first === 0) continue;
      const bit = Math.floor(random() * 256);
      expect(verifyConsistency(first, size, proof, flipBit(a, bit), b)).toBe(false);
      expect(verifyConsistency(first, size, proof, a, flipBit(b, bit))).toBe(false);
      for (let p = 0; p < proof.length; p++) {
        const bad = proof.map((h, i) => (i === p ? flipBit(h, Math.floor(random() * 256)) : h));
        expect(verifyConsistency(first, size, bad, a, b)).toBe(false);
      }
    }
  });
});

describe("the service's in-memory tree (right-edge ranges memoised)", () => {
  it('answers the same roots and proofs as a plain reader at every size, while it grows', () => {
    const leaves = Array.from({ length: 300 }, (_, i) => leafHash(Buffer.from(`grow ${i}`)));
    const plain = readerOf(leaves);
    const tree = new MerkleTree();
    const random = prng(0x3e30);
    for (let size = 1; size <= leaves.length; size += 1 + Math.floor(random() * 9)) {
      tree.append(leaves.slice(tree.size, size));
      // Proofs against every earlier size too: a memoised range must stay right as the tree grows.
      for (const at of [size, Math.max(1, Math.floor(size / 2)), 1 + Math.floor(random() * size)]) {
        expect(hex(tree.root(at))).toBe(hex(treeRoot(plain, at)));
        const index = Math.floor(random() * at);
        expect(tree.inclusion(index, at).map(hex)).toEqual(inclusionProof(plain, index, at).map(hex));
        const first = Math.floor(random() * (at + 1));
        expect(tree.consistency(first, at).map(hex)).toEqual(consistencyProof(plain, first, at).map(hex));
      }
    }
    expect(tree.node.ranges?.size).toBeGreaterThan(0);
  });
});
