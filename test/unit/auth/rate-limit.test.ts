/**
 * The sliding-window counters behind the request limits (01 §7) and mandate rate caps (08 §4.6),
 * one contract for the in-memory and the Redis implementation.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryRateCounters, type MandateRateCounter, type RequestRateCounter } from '../../../src/auth/rate-limit.js';
import { RedisRateCounters } from '../../../src/auth/rate-limit-redis.js';
import { startRedisServer } from '../../support/redis-server.js';

type Counters = RequestRateCounter & MandateRateCounter;

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

function counterContract(name: string, fresh: () => Promise<Counters>) {
  describe(name, () => {
    it('take: allows up to the limit per window, then answers the wait until the oldest call leaves', async () => {
      const c = await fresh();
      expect(await c.take('k', 3, 60_000, T0)).toEqual({ allowed: true, retryAfterSeconds: 0 });
      expect((await c.take('k', 3, 60_000, T0 + 10_000)).allowed).toBe(true);
      expect((await c.take('k', 3, 60_000, T0 + 20_000)).allowed).toBe(true);
      expect(await c.take('k', 3, 60_000, T0 + 30_000)).toEqual({ allowed: false, retryAfterSeconds: 30 });
      // A refused call does not count: the wait is unchanged.
      expect(await c.take('k', 3, 60_000, T0 + 59_500)).toEqual({ allowed: false, retryAfterSeconds: 1 });
      expect((await c.take('k', 3, 60_000, T0 + 60_000)).allowed).toBe(true);
      expect(await c.take('k', 3, 60_000, T0 + 60_001)).toEqual({ allowed: false, retryAfterSeconds: 10 });
      expect((await c.take('other', 3, 60_000, T0 + 60_001)).allowed).toBe(true);
    });

    it('take: Retry-After is a whole number of seconds, at least 1', async () => {
      const c = await fresh();
      await c.take('k', 1, 1000, T0);
      expect(await c.take('k', 1, 1000, T0 + 999)).toEqual({ allowed: false, retryAfterSeconds: 1 });
      await c.take('j', 1, 60_000, T0);
      expect(await c.take('j', 1, 60_000, T0 + 100)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    });

    it('takeAll: counts a call on every budget or on none, and names the first that refused', async () => {
      const c = await fresh();
      const budgets = [
        { key: 'wide', limit: 3 },
        { key: 'narrow', limit: 1 },
      ];
      expect(await c.takeAll(budgets, 60_000, T0)).toBeNull();
      expect(await c.takeAll(budgets, 60_000, T0 + 10_000)).toEqual({
        index: 1,
        decision: { allowed: false, retryAfterSeconds: 50 },
      });
      // The refused calls counted on no budget: 'wide' still holds one call, so two more fit.
      expect(await c.take('wide', 3, 60_000, T0 + 20_000)).toEqual({ allowed: true, retryAfterSeconds: 0 });
      expect(await c.take('wide', 3, 60_000, T0 + 20_000)).toEqual({ allowed: true, retryAfterSeconds: 0 });
      expect(await c.takeAll(budgets, 60_000, T0 + 30_000)).toEqual({
        index: 0,
        decision: { allowed: false, retryAfterSeconds: 30 },
      });
      expect(await c.takeAll([{ key: 'narrow', limit: 1 }], 60_000, T0 + 60_000)).toBeNull();
    });

    it('check/record: counts only recorded calls, per window of the asking mandate', async () => {
      const c = await fresh();
      expect((await c.check('m', 2, 60, T0)).allowed).toBe(true);
      await c.record('m', T0, 3600);
      await c.record('m', T0 + 30_000, 3600);
      expect(await c.check('m', 2, 60, T0 + 40_000)).toEqual({ allowed: false, retryAfterSeconds: 20 });
      expect((await c.check('m', 3, 60, T0 + 40_000)).allowed).toBe(true);
      expect((await c.check('m', 2, 60, T0 + 60_000)).allowed).toBe(true);
      // A longer window still sees the older call (entries are kept for the longest window recorded).
      expect(await c.check('m', 2, 3600, T0 + 60_000)).toEqual({ allowed: false, retryAfterSeconds: 3540 });
    });

    it('check: with more calls than a stricter limit, waits until enough have left', async () => {
      const c = await fresh();
      for (const at of [0, 10_000, 20_000, 30_000]) await c.record('m', T0 + at, 60);
      // Four calls in the window, limit 2: three must leave for one more to fit, the last at T0 + 20 s + 60 s.
      expect(await c.check('m', 2, 60, T0 + 35_000)).toEqual({ allowed: false, retryAfterSeconds: 45 });
    });
  });
}

counterContract('MemoryRateCounters', async () => new MemoryRateCounters());

const server = await startRedisServer();
const connections: Redis[] = [];
afterAll(async () => {
  for (const redis of connections) redis.disconnect();
  await server?.stop();
});

describe.skipIf(server === null)('on Redis', () => {
  const open = () => {
    const redis = new Redis(server!.url);
    connections.push(redis);
    return redis;
  };
  counterContract('RedisRateCounters', async () => new RedisRateCounters(open(), `test-${randomUUID().slice(0, 8)}:`));
  // A Cluster client counts each budget with its own script call (keys of several slots): the same contract.
  counterContract(
    'RedisRateCounters as on a Cluster',
    async () => new RedisRateCounters(Object.assign(open(), { isCluster: true }), `test-${randomUUID().slice(0, 8)}:`),
  );

  it('shares counts between connections (processes) with the same prefix, under its own keys', async () => {
    const prefix = `test-${randomUUID().slice(0, 8)}:`;
    const a = new RedisRateCounters(open(), prefix);
    const b = new RedisRateCounters(open(), prefix);
    await a.take('ip:1.2.3.4', 2, 60_000, T0);
    await b.take('ip:1.2.3.4', 2, 60_000, T0 + 1);
    expect((await a.take('ip:1.2.3.4', 2, 60_000, T0 + 2)).allowed).toBe(false);
    await b.record('m', T0, 60);
    expect((await a.check('m', 1, 60, T0 + 1)).allowed).toBe(false);
    const keys = (await open().keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}rate:mandate:m`, `${prefix}rate:req:ip:1.2.3.4`]);
  });
});
