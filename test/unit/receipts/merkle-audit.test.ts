import { describe, expect, it } from 'vitest';
import { buildMerkleRoot, canonicalJson, nextAuditHash, sha256Hex } from '../../../src/receipts/index.js';

const leaf = (n: number) => sha256Hex(String(n));
const pair = (l: string, r: string) => sha256Hex(Buffer.concat([Buffer.from(l, 'hex'), Buffer.from(r, 'hex')]));

describe('buildMerkleRoot', () => {
  it('uses a single leaf as the root', () => {
    expect(buildMerkleRoot([leaf(1)])).toBe(leaf(1));
  });

  it('pairs an odd last node with itself on every level', () => {
    const [a, b, c, d, e] = [1, 2, 3, 4, 5].map(leaf) as [string, string, string, string, string];
    const expected = pair(pair(pair(a, b), pair(c, d)), pair(pair(e, e), pair(e, e)));
    expect(buildMerkleRoot([a, b, c, d, e])).toBe(expected);
  });

  it('refuses zero leaves and non-digest leaves', () => {
    expect(() => buildMerkleRoot([])).toThrow(/at least one/);
    expect(() => buildMerkleRoot(['abc'])).toThrow(/leaf 0/);
  });
});

describe('nextAuditHash', () => {
  it('omits the previous hash for the first link and hashes raw bytes after that', () => {
    const body = { b: 1, a: 2 };
    const ts = '2026-05-05T12:00:00Z';
    expect(nextAuditHash(null, body, ts)).toBe(sha256Hex(canonicalJson(body) + ts));
    const prev = leaf(9);
    const expected = sha256Hex(Buffer.concat([Buffer.from(prev, 'hex'), Buffer.from(canonicalJson(body) + ts)]));
    expect(nextAuditHash(prev, body, ts)).toBe(expected);
  });

  it('refuses a previous hash that is not 64 hex characters', () => {
    expect(() => nextAuditHash('sha256:00', {}, 't')).toThrow(/64 hex/);
  });
});
