/**
 * The integrator's fast VRF output (src/tlog/position-output.ts: X25519 by OpenSSL and a
 * square-root-free y-recovery) is exactly the output of the full ECVRF prove (src/tlog/vrf.ts,
 * checked against RFC 9381's vectors) — for several keys and many inputs — and derives the very
 * position key position.ts derives from a receipt signing seed.
 */
import { describe, expect, it } from 'vitest';
import { positionAlpha, positionKeyFor } from '../../../src/tlog/position.js';
import { fastVrfKeyFromSeed, positionKeySeed } from '../../../src/tlog/position-output.js';
import { vrfKeyFromSeed } from '../../../src/tlog/vrf.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('the fast VRF output', () => {
  it('equals the full prove’s output for every key and input tried', () => {
    for (const fill of [0, 7, 9, 255]) {
      const seed = new Uint8Array(32).fill(fill);
      const fast = fastVrfKeyFromSeed(seed);
      const full = vrfKeyFromSeed(seed);
      expect(hex(fast.publicKey)).toBe(hex(full.publicKey));
      for (let i = 0; i < 25; i++) {
        const alpha = positionAlpha(`https://conclave.example/r/room${fill}x${i}`, i + 1);
        expect([fill, i, hex(fast.output(alpha))]).toEqual([fill, i, hex(full.prove(alpha).output)]);
      }
      expect(hex(fast.output(new Uint8Array(0)))).toBe(hex(full.prove(new Uint8Array(0)).output));
    }
  });

  it('derives the position key of a receipt signing seed as position.ts does', () => {
    const receiptSeed = new Uint8Array(32).fill(7);
    expect(hex(fastVrfKeyFromSeed(positionKeySeed(receiptSeed)).publicKey)).toBe(
      hex(positionKeyFor(receiptSeed).publicKey),
    );
  });
});
