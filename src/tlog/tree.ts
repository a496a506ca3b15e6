/**
 * The log's Merkle tree in memory: every complete subtree hash, level by level (level 0: the leaf
 * hashes). Complete subtrees never change once they exist, so the arrays only grow, and proofs for
 * any published size are read from them directly. About 64 bytes per leaf.
 */
import { consistencyProof, type Hash, inclusionProof, type NodeReader, nodeHash, treeRoot } from './merkle.js';

/** Memoised right-edge ranges kept at most (about 40 per tree size; 100 bytes each). */
const MAX_MEMO_RANGES = 8192;

export class MerkleTree {
  /** levels[k][i]: the hash of leaves [i·2^k, (i+1)·2^k). */
  private readonly levels: Hash[][] = [[]];

  get size(): number {
    return (this.levels[0] as Hash[]).length;
  }

  /** Appends leaf hashes and every subtree they complete. */
  append(leaves: readonly Hash[]): void {
    for (const leaf of leaves) {
      (this.levels[0] as Hash[]).push(leaf);
      for (let k = 0; ; k++) {
        const level = this.levels[k] as Hash[];
        if (level.length % 2 !== 0) break;
        if (!this.levels[k + 1]) this.levels[k + 1] = [];
        (this.levels[k + 1] as Hash[]).push(nodeHash(level[level.length - 2] as Hash, level[level.length - 1] as Hash));
      }
    }
  }

  /** The hashes stored at one level from `from` on (a tile's worth, for persisting and serving). */
  hashesAt(level: number, from: number, to: number): Hash[] {
    return (this.levels[level] ?? []).slice(from, to);
  }

  /** How many complete subtrees of 2^level leaves exist. */
  countAt(level: number): number {
    return (this.levels[level] ?? []).length;
  }

  readonly node: NodeReader = Object.assign(
    (level: number, index: number) => {
      const hash = this.levels[level]?.[index];
      if (!hash) throw new RangeError(`no complete subtree at level ${level}, index ${index}`);
      return hash;
    },
    // Right-edge ranges of the sizes proofs were asked for: a proof against the latest checkpoint
    // then hashes nothing (docs/transparency-log.md, Costs). Dropped whole when it grows past the bound.
    { ranges: new Map<string, Hash>() },
  );

  root(size = this.size): Hash {
    this.assertSize(size);
    return treeRoot(this.node, size);
  }

  inclusion(index: number, size: number): Hash[] {
    this.assertSize(size);
    this.boundRanges();
    return inclusionProof(this.node, index, size);
  }

  consistency(first: number, second: number): Hash[] {
    this.assertSize(second);
    this.boundRanges();
    return consistencyProof(this.node, first, second);
  }

  private boundRanges(): void {
    const ranges = this.node.ranges as Map<string, Hash>;
    if (ranges.size > MAX_MEMO_RANGES) ranges.clear();
  }

  private assertSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size) {
      throw new RangeError(`the tree has ${this.size} leaves, not ${size}`);
    }
  }
}
