/** ParkingCapacity: the pool, the shares per address and per credential, and giving places back. */
import { describe, expect, it } from 'vitest';
import { ParkingCapacity } from '../../../src/engagement/capacity.js';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as { code: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a refusal');
};

describe('ParkingCapacity', () => {
  it('derives the shares from the pool, never below one place', () => {
    const pool = new ParkingCapacity(20_000);
    expect([pool.addressLimit, pool.credentialLimit]).toEqual([2000, 400]);
    const tiny = new ParkingCapacity(2);
    expect([tiny.addressLimit, tiny.credentialLimit]).toEqual([1, 1]);
    const custom = new ParkingCapacity(100, { addressPercent: 50, credentialPercent: 100 });
    expect([custom.addressLimit, custom.credentialLimit]).toEqual([50, 100]);
  });

  it('refuses an address, then a credential, over its share with 429; the full pool with 503', () => {
    const pool = new ParkingCapacity(20, { addressPercent: 50, credentialPercent: 25 });
    for (let i = 0; i < 10; i++) pool.enter({ address: 'a', credential: `t${i}` });
    expect(refusal(() => pool.enter({ address: 'a', credential: 'fresh' }))).toMatchObject({
      code: 'rate_limit.exceeded',
      details: { scope: 'ip', limit: 10 },
    });
    for (let i = 0; i < 5; i++) pool.enter({ address: `b${i}`, credential: 'shared' });
    expect(refusal(() => pool.enter({ address: 'b9', credential: 'shared' }))).toMatchObject({
      code: 'rate_limit.exceeded',
      details: { scope: 'credential', limit: 5 },
    });
    for (let i = 0; i < 5; i++) pool.enter({ address: `c${i}`, credential: null });
    expect(pool.parked).toBe(20);
    expect(refusal(() => pool.enter({ address: 'd', credential: null }))).toMatchObject({
      code: 'vendor:conclave:unavailable',
    });
  });

  it('gives each place back once, however often release is called', () => {
    const pool = new ParkingCapacity(10, { addressPercent: 10, credentialPercent: 10 });
    const release = pool.enter({ address: 'a', credential: 'x' });
    release();
    release();
    expect(pool.parked).toBe(0);
    pool.enter({ address: 'a', credential: 'x' });
    expect(pool.parked).toBe(1);
  });
});
