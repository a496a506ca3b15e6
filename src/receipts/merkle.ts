import { createHash } from 'node:crypto';

const HEX_256 = /^[0-9a-f]{64}$/;

/**
 * Merkle root over hex SHA-256 leaves (docs/receipts.md): parent = SHA-256(left ‖ right) over raw bytes, an odd
 * last node pairs with itself, one leaf is its own root.
 */
export function buildMerkleRoot(leavesHex: string[]): string {
  if (leavesHex.length === 0) throw new Error('a Merkle root needs at least one leaf');
  let level: Buffer[] = leavesHex.map((leaf, i) => {
    const hex = leaf.toLowerCase();
    if (!HEX_256.test(hex)) throw new Error(`Merkle leaf ${i} is not a hex SHA-256 digest`);
    return Buffer.from(hex, 'hex');
  });
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as Buffer;
      const right = level[i + 1] ?? left;
      next.push(createHash('sha256').update(left).update(right).digest());
    }
    level = next;
  }
  return (level[0] as Buffer).toString('hex');
}
