/**
 * A room lock that lingers after its commit (src/store/redis-room-lease.ts), against a real Redis and
 * two stores standing for two processes: the next batch of the same process reuses it and reads
 * under it are answered without Redis; another process that wants the room gets it without waiting
 * the linger out and then sees every write; an unused lock is left to lapse with its TTL (no release
 * round trip), reused late with a renewal, and let go at close; and if Redis loses the lock anyway,
 * fencing still refuses the old holder's commit.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { type CommitBatch, StoreConflictError } from '../../../src/store/port.js';
import { SAFETY_MS } from '../../../src/store/redis-room-lease.js';
import { openRedisStore, type RedisStore } from '../../../src/store/redis-store.js';
import { eventually } from '../../support/engagement.js';
import { startRedisServer } from '../../support/redis-server.js';

const server = await startRedisServer();
afterAll(async () => {
  await server?.stop();
});

const TTL = 1_500;
const slug = 'l1ngerr00m';

function batch(expected_version: number, rest: Partial<CommitBatch> = {}): CommitBatch {
  return {
    slug,
    expected_version,
    snapshot: JSON.stringify({ version: expected_version + 1 }),
    events: [],
    receipts: [],
    next_deadline: null,
    ...rest,
  };
}

describe.skipIf(server === null)('a room lock that lingers after its commit', () => {
  const url = server?.url ?? '';
  let keyPrefix = '';
  let raw: Redis;
  const lockKey = () => `${keyPrefix}room:{${slug}}:lock`;

  async function stores(count: number): Promise<RedisStore[]> {
    keyPrefix = `lease-${randomUUID().slice(0, 8)}:`;
    raw = new Redis(url);
    return Promise.all(Array.from({ length: count }, () => openRedisStore({ url, keyPrefix })));
  }

  /** Creates the room, then commits once under the lock, as the registry does: the lock lingers. */
  async function createAndCommit(store: RedisStore) {
    const created = await store.commit(batch(0));
    const lock = await store.lock(slug, TTL, 1_000, { version: created.version, revision: created.revision });
    expect(lock.found).toEqual({ version: 1, revision: created.revision });
    const second = await store.commit({
      ...batch(1),
      expected_revision: created.revision!,
      fence: lock.token,
      release_lock: true,
    });
    return { lock, second };
  }

  async function closeAll(list: RedisStore[]): Promise<void> {
    await Promise.all(list.map((store) => store.close()));
    await raw.quit();
  }

  it('stays with the process: its next batch reuses it, and reads under it need no round trip', async () => {
    const [a] = await stores(1);
    try {
      const { lock, second } = await createAndCommit(a!);
      expect(await raw.get(lockKey())).toBe(lock.token);
      const known = { version: second.version, revision: second.revision };
      // Forge what no process could do while the lock is held: the answers come from the lease.
      await raw.hset(`${keyPrefix}room:{${slug}}`, 'version', '99');
      expect(await a!.loadIfChanged(slug, known)).toBe('unchanged');
      expect(await a!.roomExists(slug)).toBe(true);
      const again = await a!.lock(slug, TTL, 1_000, known);
      expect(again.token).toBe(lock.token);
      expect(again.found).toEqual(known);
      await again.release();
      expect(await raw.get(lockKey())).toBeNull();
      // Let go, the next check asks Redis and sees the forged version.
      expect(await a!.loadIfChanged(slug, known)).toMatchObject({ version: 99 });
    } finally {
      await closeAll([a!]);
    }
  });

  it('goes at once to another process that wants the room, which then sees every write', async () => {
    const [a, b] = await stores(2);
    try {
      const { second } = await createAndCommit(a!);
      const asked = performance.now();
      const taken = await b!.lock(slug, TTL, 5_000, null);
      const waited = performance.now() - asked;
      console.log(`lingering lock handed to another process after ${waited.toFixed(0)} ms (lock TTL ${TTL} ms)`);
      expect(waited).toBeLessThan(TTL / 2);
      expect(taken.found).toEqual({ version: second.version, revision: second.revision });
      const third = await b!.commit({
        ...batch(2),
        expected_revision: second.revision!,
        fence: taken.token,
        release_lock: true,
      });
      // The first process no longer answers from its lease: it sees the other one's commit.
      expect(await a!.loadIfChanged(slug, { version: second.version, revision: second.revision })).toMatchObject({
        version: third.version,
      });
      const back = await a!.lock(slug, TTL, 5_000, { version: second.version, revision: second.revision });
      expect(back.found).toEqual({ version: third.version, revision: third.revision });
      await back.release();
    } finally {
      await closeAll([a!, b!]);
    }
  });

  it('is left to lapse in Redis when unused, without a release; reused late, it is renewed; close lets it go', async () => {
    const [a] = await stores(1);
    try {
      const { lock, second } = await createAndCommit(a!);
      const committed = performance.now();
      // Still held past the old 400 ms linger: nobody sent a release.
      await sleep(TTL / 2 - SAFETY_MS + 100);
      expect(await raw.get(lockKey())).toBe(lock.token);
      expect(await raw.pttl(lockKey())).toBeLessThan(TTL - (TTL / 2 - SAFETY_MS));
      // Less than half its TTL left: the next batch reuses it and renews it alongside.
      const known = { version: second.version, revision: second.revision };
      const late = await a!.lock(slug, TTL, 1_000, known);
      expect(late.token).toBe(lock.token);
      expect(late.found).toEqual(known);
      await eventually(async () => (await raw.pttl(lockKey())) > TTL - 200, 2_000);
      const third = await a!.commit({
        ...batch(2),
        expected_revision: second.revision!,
        fence: late.token,
        release_lock: true,
      });
      const lapsedFrom = performance.now();
      await eventually(async () => (await raw.get(lockKey())) === null, 5_000);
      expect(performance.now() - lapsedFrom).toBeGreaterThanOrEqual(TTL - SAFETY_MS);
      expect(performance.now() - committed).toBeGreaterThanOrEqual(TTL);
      // Lapsed, the next lock is a new one, taken at the stored version.
      const again = await a!.lock(slug, TTL, 1_000, { version: third.version, revision: third.revision });
      expect(again.token).not.toBe(lock.token);
      await a!.commit({ ...batch(3), fence: again.token, release_lock: true });
      expect(await raw.get(lockKey())).toBe(again.token);
      await a!.close();
      expect(await raw.get(lockKey())).toBeNull();
    } finally {
      await raw.quit();
    }
  });

  it('if Redis loses it anyway, fencing refuses the old holder commit', async () => {
    const [a, b] = await stores(2);
    try {
      const { second } = await createAndCommit(a!);
      // The lock vanishes in Redis (a failover to a replica that never had it): nobody hears of it.
      await raw.del(lockKey());
      const taken = await b!.lock(slug, TTL, 1_000, null);
      await b!.commit({ ...batch(2), expected_revision: second.revision!, fence: taken.token, release_lock: true });
      const stale = await a!.lock(slug, TTL, 1_000, { version: second.version, revision: second.revision });
      await expect(
        a!.commit({ ...batch(2), expected_revision: second.revision!, fence: stale.token, release_lock: true }),
      ).rejects.toThrow(StoreConflictError);
      // Refused, the old holder forgets its lease and reads from Redis again.
      expect(await a!.loadIfChanged(slug, { version: second.version, revision: second.revision })).toMatchObject({
        version: 3,
      });
      await stale.release();
    } finally {
      await closeAll([a!, b!]);
    }
  });
});
