/**
 * The commitment leaf and the position label (src/tlog/receipt-leaf.ts, src/tlog/position.ts): the
 * exact bytes the log publishes, that they say nothing of the room, and that a parser accepts only
 * exactly that format.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../../src/tlog/note.js';
import { positionAlpha, positionKeyFor, positionLabel } from '../../../src/tlog/position.js';
import { parseReceiptLeaf, receiptLeaf } from '../../../src/tlog/receipt-leaf.js';
import { vrfKeyFromSeed, vrfVerify } from '../../../src/tlog/vrf.js';

const ROOM = 'https://rooms.example/r/secret-merger-vote';
const JWS = 'eyJhbGciOiJFZERTQSJ9.eyJzdmMiOnsicm9vbV9pZCI6Imh0dHBzOi8vcm9vbXMuZXhhbXBsZS9yL3NlY3JldCJ9fQ.c2ln';
const seed = new Uint8Array(32).fill(3);

describe('position key and label', () => {
  it('derives the position key from the signing seed under its own label', () => {
    const expected = createHash('sha256').update('conclave transparency log position key v1\n').update(seed).digest();
    const key = positionKeyFor(seed);
    expect(Buffer.from(key.publicKey)).toEqual(Buffer.from(vrfKeyFromSeed(expected).publicKey));
    // Not the seed's own VRF key: the receipt key never computes a VRF.
    expect(Buffer.from(key.publicKey)).not.toEqual(Buffer.from(vrfKeyFromSeed(seed).publicKey));
  });

  it('labels a position with the signed room id and the decimal sequence', () => {
    expect(new TextDecoder().decode(positionAlpha(ROOM, 12))).toBe(`conclave receipt position v1\n${ROOM}\n12`);
    expect(() => positionAlpha(ROOM, 0)).toThrow(RangeError);
    expect(() => positionAlpha(ROOM, 1.5)).toThrow(RangeError);
    const key = positionKeyFor(seed);
    const { proof, output } = key.prove(positionAlpha(ROOM, 1));
    const verified = vrfVerify(key.publicKey, positionAlpha(ROOM, 1), proof);
    expect(verified && Buffer.from(positionLabel(verified))).toEqual(Buffer.from(output.subarray(0, 32)));
  });
});

describe('receipt leaf', () => {
  const key = positionKeyFor(seed);
  const label = positionLabel(key.prove(positionAlpha(ROOM, 1)).output);

  it('is exactly the four ASCII lines of the format', () => {
    const commitment = createHash('sha256').update(JWS).digest('base64');
    const leaf = receiptLeaf(JWS, key.keyId, label);
    expect(new TextDecoder().decode(leaf)).toBe(
      `conclave-receipt-commitment/v1\n${key.keyId}\n${toBase64(label)}\n${commitment}\n`,
    );
  });

  it('names nothing of the room: no room id, no slug, no JWS segment', () => {
    const text = new TextDecoder().decode(receiptLeaf(JWS, key.keyId, label));
    for (const secret of [ROOM, 'secret-merger-vote', 'rooms.example', ...JWS.split('.')]) {
      expect(text).not.toContain(secret);
    }
  });

  it('parses back to its parts', () => {
    const parsed = parseReceiptLeaf(receiptLeaf(JWS, key.keyId, label));
    expect(parsed?.keyId).toBe(key.keyId);
    expect(Buffer.from(parsed?.label ?? [])).toEqual(Buffer.from(label));
    expect(Buffer.from(parsed?.commitment ?? [])).toEqual(createHash('sha256').update(JWS).digest());
  });

  it('parses nothing else: a JWS leaf of the frozen log, a changed header, extra lines, bad lengths', () => {
    const good = new TextDecoder().decode(receiptLeaf(JWS, key.keyId, label));
    const variants = [
      JWS,
      good.replace('/v1', '/v2'),
      good.slice(0, -1),
      `${good}\n`,
      good.replace(key.keyId, key.keyId.toUpperCase()),
      good.replace(key.keyId, `${key.keyId}0`),
      good.replace(toBase64(label), toBase64(label.subarray(0, 31))),
      good.replace(toBase64(label), toBase64(label).replace(/=*$/, '')),
      good.replace(/\n/g, '\r\n'),
    ];
    for (const variant of variants) expect(parseReceiptLeaf(new TextEncoder().encode(variant)), variant).toBeNull();
    expect(parseReceiptLeaf(Uint8Array.of(0xff, 0xfe))).toBeNull();
  });

  it('refuses to build a leaf from a malformed key id or label', () => {
    expect(() => receiptLeaf(JWS, 'ABCDEF01', label)).toThrow(RangeError);
    expect(() => receiptLeaf(JWS, key.keyId, label.subarray(0, 16))).toThrow(RangeError);
  });
});
