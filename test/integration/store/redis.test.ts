import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/index.js';
import { StoreUnavailableError } from '../../../src/store/port.js';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { WAITER_POLL_MS } from '../../../src/store/redis-room-lock.js';
import { eventually } from '../../support/engagement.js';
import { startRedisServer } from '../../support/redis-server.js';
import { event, receipt, storeContract } from './contract.js';
import { engagementContract } from './engagement-contract.js';

const server = await startRedisServer();

/** Each test gets its own key prefix, so tests never see each other's data. */
const newPrefix = () => `test-${randomUUID().slice(0, 8)}:`;

afterAll(async () => {
  await server?.stop();
});

describe.skipIf(server === null)('RedisStore', () => {
  const url = server?.url ?? '';

  const target = {
    async fresh() {
      const keyPrefix = newPrefix();
      return { open: (clock?: () => number) => openRedisStore({ url, keyPrefix, ...(clock ? { clock } : {}) }) };
    },
  };
  storeContract(target);
  engagementContract(target);

  describe('the room lock is taken in turn', () => {
    const slug = 'f4irl0ckq2';

    it('hands a let-go lock to the process that waited, not to the one that let it go and asks again', async () => {
      // Before the line, the releasing process's next SET NX followed its release on the same
      // connection while the waiter slept out its backoff: a process writing a hot room kept it.
      const keyPrefix = newPrefix();
      const [a, b] = await Promise.all([openRedisStore({ url, keyPrefix }), openRedisStore({ url, keyPrefix })]);
      try {
        const held = await a.lock(slug, 10_000, 0);
        const order: string[] = [];
        const waiting = b.lock(slug, 10_000, 2_000).then((lock) => {
          order.push('waiter');
          return lock;
        });
        await sleep(50);
        await held.release();
        const again = a.lock(slug, 10_000, 2_000).then((lock) => {
          order.push('releaser');
          return lock;
        });
        const first = await waiting;
        await sleep(50);
        expect(order).toEqual(['waiter']);
        await first.release();
        await (await again).release();
        expect(order).toEqual(['waiter', 'releaser']);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('wakes a waiter when the lock is let go instead of leaving it to poll', async () => {
      const keyPrefix = newPrefix();
      const [a, b] = await Promise.all([openRedisStore({ url, keyPrefix }), openRedisStore({ url, keyPrefix })]);
      try {
        const held = await a.lock(slug, 10_000, 0);
        const waiting = b.lock(slug, 10_000, 2_000);
        // Just after the waiter's second try (at WAITER_POLL_MS): polling alone would take it
        // only at its third, most of an interval after the release.
        await sleep(WAITER_POLL_MS + 50);
        const released = Date.now();
        await held.release();
        await (await waiting).release();
        expect(Date.now() - released).toBeLessThan(WAITER_POLL_MS / 2);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('passes over a waiter whose process stopped asking once its lease lapses', async () => {
      const keyPrefix = newPrefix();
      const store = await openRedisStore({ url, keyPrefix });
      const raw = new Redis(url);
      try {
        // A waiter that joined the line and died: its lease runs out 300 ms from now.
        const now = Number((await raw.time())[0]) * 1000;
        await raw.rpush(`${keyPrefix}room:{${slug}}:lockq`, 'ghost');
        await raw.hset(`${keyPrefix}room:{${slug}}:lockl`, 'ghost', String(now + 1_300));
        await expect(store.lock(slug, 10_000, 0)).rejects.toThrow(StoreUnavailableError);
        const lock = await store.lock(slug, 10_000, 3_000);
        expect(await raw.llen(`${keyPrefix}room:{${slug}}:lockq`)).toBe(0);
        await lock.release();
      } finally {
        await raw.quit();
        await store.close();
      }
    });

    it('a waiter that gives up leaves the line at once', async () => {
      const keyPrefix = newPrefix();
      const [a, b] = await Promise.all([openRedisStore({ url, keyPrefix }), openRedisStore({ url, keyPrefix })]);
      try {
        const held = await a.lock(slug, 10_000, 0);
        await expect(b.lock(slug, 10_000, 100)).rejects.toThrow(StoreUnavailableError);
        await held.release();
        await (await b.lock(slug, 10_000, 0)).release();
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('a caller that will not wait tries once: it neither joins the line nor wakes the holder', async () => {
      const keyPrefix = newPrefix();
      const [a, b] = await Promise.all([openRedisStore({ url, keyPrefix }), openRedisStore({ url, keyPrefix })]);
      const listener = new Redis(url);
      const raw = new Redis(url);
      try {
        const heard: string[] = [];
        const sentinel = new Promise<void>((resolve) => {
          listener.on('message', (_channel: string, message: string) => {
            heard.push(message);
            if (message === 'sentinel') resolve();
          });
        });
        await listener.subscribe(`${keyPrefix}lockwakes`);
        const held = await a.lock(slug, 10_000, 0);
        await expect(b.lock(slug, 10_000, 0)).rejects.toThrow(StoreUnavailableError);
        expect(await raw.llen(`${keyPrefix}room:{${slug}}:lockq`)).toBe(0);
        expect(await raw.hlen(`${keyPrefix}room:{${slug}}:lockl`)).toBe(0);
        // Published after the try: whatever the try published reached the listener before it.
        await raw.publish(`${keyPrefix}lockwakes`, 'sentinel');
        await sentinel;
        expect(heard).toEqual(['sentinel']);
        await held.release();
        await (await b.lock(slug, 10_000, 0)).release();
      } finally {
        await Promise.all([listener.quit(), raw.quit(), a.close(), b.close()]);
      }
    });

    it('brings the room along with the lock when it is not what the caller has cached', async () => {
      const keyPrefix = newPrefix();
      const store = await openRedisStore({ url, keyPrefix });
      try {
        const created = await store.commit({
          slug,
          expected_version: 0,
          snapshot: '{"v":1}',
          events: [],
          receipts: [],
          next_deadline: null,
        });
        const cold = await store.lock(slug, 10_000, 0, null);
        expect(cold.loaded).toMatchObject({ version: 1, snapshot: '{"v":1}' });
        await cold.release();
        const warm = await store.lock(slug, 10_000, 0, { version: 1, revision: created.revision });
        expect(warm.loaded).toBeUndefined();
        expect(warm.found).toEqual({ version: 1, revision: created.revision });
        await warm.release();
        const behind = await store.lock(slug, 10_000, 0, { version: 1, revision: 'another history' });
        expect(behind.loaded).toMatchObject({ version: 1, revision: created.revision });
        await behind.release();
        const unasked = await store.lock(slug, 10_000, 0);
        expect(unasked.loaded).toBeUndefined();
        await unasked.release();
      } finally {
        await store.close();
      }
    });
  });

  it('opens through openStore', async () => {
    const store = await openStore({ kind: 'redis', url, keyPrefix: newPrefix() });
    expect(store.kind).toBe('redis');
    await store.ping();
    await store.close();
  });

  it("keeps every key of a room under the room's hash tag", async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix });
    await store.reserveSlug('k7m3pq2dnx');
    const lock = await store.lock('k7m3pq2dnx', 10_000, 0);
    await store.commit({
      slug: 'k7m3pq2dnx',
      expected_version: 0,
      snapshot: '{}',
      events: [event(1)],
      receipts: [receipt(1)],
      idempotency: [{ scope: 'k7m3pq2dnx|h', fingerprint: 'f', status: 201, body: '{}', created_at: Date.now() }],
      next_deadline: 10,
      archived: [{ decision_id: 'd', seq: 1, data: '{}' }],
      fence: lock.token,
    });
    const raw = new Redis(url);
    const keys = (await raw.keys(`${keyPrefix}*`)).sort();
    await raw.quit();
    await lock.release();
    await store.close();
    // The transparency log's queue is the log's, under its own tag (redis-tlog.ts).
    const global = (key: string) =>
      key === `${keyPrefix}slugs` ||
      key.startsWith(`${keyPrefix}deadlines:{d`) ||
      key === `${keyPrefix}tlog:{~log}:queue`;
    expect(keys.filter((key) => !global(key))).toEqual(
      ['', ':archived', ':eventids', ':events', ':idem:k7m3pq2dnx|h', ':lock', ':receipts'].map(
        (suffix) => `${keyPrefix}room:{k7m3pq2dnx}${suffix}`,
      ),
    );
  });

  it('checks a room written before revisions existed by its version alone, and a fork by its revision', async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix });
    // The room hash as the code before revisions wrote it: no revision field.
    const raw = new Redis(url);
    await raw.hset(`${keyPrefix}room:{older}`, 'version', 3, 'head', 5, 'chain_len', 0, 'snapshot', '{"old":1}');
    expect(await store.loadIfChanged('older', { version: 3 })).toBe('unchanged');
    expect(await store.loadIfChanged('older', { version: 2 })).toEqual({
      slug: 'older',
      version: 3,
      head: 5,
      snapshot: '{"old":1}',
      next_deadline: null,
    });
    // Same version, other history (a failover): the snapshot is read again.
    await raw.hset(`${keyPrefix}room:{older}`, 'revision', 'another-history');
    expect(await store.loadIfChanged('older', { version: 3 })).toMatchObject({ revision: 'another-history' });
    expect(await store.loadIfChanged('older', { version: 3, revision: 'mine' })).toMatchObject({ version: 3 });
    await raw.quit();
    await store.close();
  });

  it("reports the room's version and revision with the lock, read in the same round trip", async () => {
    const store = await openRedisStore({ url, keyPrefix: newPrefix() });
    const none = await store.lock('lockread', 10_000, 0);
    expect(none.found).toBeNull();
    const created = await store.commit({
      slug: 'lockread',
      expected_version: 0,
      snapshot: '{}',
      events: [],
      receipts: [],
      next_deadline: null,
      fence: none.token,
    });
    await none.release();
    const taken = await store.lock('lockread', 10_000, 0);
    expect(taken.found).toEqual({ version: created.version, revision: created.revision });
    // Held: another acquisition waits, then gives up, as before.
    await expect(store.lock('lockread', 10_000, 30)).rejects.toThrow(StoreUnavailableError);
    await taken.release();
    await store.close();
  });

  it('tells two histories of the same length apart by revision, and refuses a commit on the other one', async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix });
    const base = { snapshot: '{}', events: [], receipts: [], next_deadline: null };
    const created = await store.commit({ slug: 'fork', expected_version: 0, ...base });
    expect(created.revision).toMatch(/^[0-9a-f-]{36}$/);
    expect((await store.load('fork'))?.revision).toBe(created.revision);
    // As after a failover: the room reached the same version through another commit.
    const raw = new Redis(url);
    await raw.hset(`${keyPrefix}room:{fork}`, 'revision', 'another-history');
    await raw.quit();
    await expect(
      store.commit({ slug: 'fork', expected_version: 1, expected_revision: created.revision, ...base }),
    ).rejects.toThrow(/revision another-history/);
    // A writer that read the room as it is commits; one that does not name a revision is not checked.
    const next = await store.commit({
      slug: 'fork',
      expected_version: 1,
      expected_revision: 'another-history',
      ...base,
    });
    expect(next.version).toBe(2);
    expect((await store.commit({ slug: 'fork', expected_version: 2, ...base })).version).toBe(3);
    await store.close();
  });

  it('stores archived decisions deflated, and reads a plain JSON entry as it is', async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix });
    const data = JSON.stringify({
      ballots: Array.from({ length: 50 }, (_, i) => ({ participantId: `p${i}`, ballot: 'alpha' })),
    });
    await store.commit({
      slug: 'arch',
      expected_version: 0,
      snapshot: '{}',
      events: [],
      receipts: [],
      next_deadline: null,
      archived: [{ decision_id: 'd2', seq: 2, data }],
    });
    const raw = new Redis(url);
    const key = `${keyPrefix}room:{arch}:archived`;
    const [packed] = await raw.zrangebyscoreBuffer(key, 2, 2);
    expect(packed!.length).toBeLessThan(data.length / 2);
    await raw.zadd(key, 1, JSON.stringify({ decision_id: 'd1', seq: 1, data: '{"old":true}' }));
    await raw.quit();
    expect(await store.archivedDecisions('arch')).toEqual([
      { decision_id: 'd1', seq: 1, data: '{"old":true}' },
      { decision_id: 'd2', seq: 2, data },
    ]);
    await store.close();
  });

  it('repairs deadline index entries that disagree with their rooms, and drains the index of earlier versions', async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix });
    const room = (slug: string, next_deadline: number | null) =>
      store.commit({ slug, expected_version: 0, snapshot: '{}', events: [], receipts: [], next_deadline });
    await room('early', 100);
    await room('later', 5_000);
    await room('none', null);
    const raw = new Redis(url);
    const shards = async () => (await raw.keys(`${keyPrefix}deadlines:{d*`)).sort();
    const entries = async () => {
      const all: string[] = [];
      for (const key of await shards()) all.push(...(await raw.zrange(key, 0, -1, 'WITHSCORES')));
      return all;
    };
    // Rooms spread over the shards of the index.
    expect((await shards()).length).toBe(2);
    // The single index an earlier version kept, as left by a crash or out-of-order updates, and a
    // stale entry in a shard:
    const legacy = `${keyPrefix}deadlines`;
    await raw.zadd(legacy, 10, 'ghost', 20, 'early', 30, 'later', 40, 'none');
    await raw.zadd((await shards())[0]!, 50, 'none');
    expect(await store.nextDeadline()).toBe(10);

    expect(await store.dueRooms(1_000, 10)).toEqual(['early']);
    expect(await raw.zrange(legacy, 0, -1)).toEqual([]);
    expect(await entries()).toEqual(expect.arrayContaining(['early', '100', 'later', '5000']));
    expect((await entries()).length).toBe(4);
    expect(await store.nextDeadline()).toBe(100);
    await raw.quit();
    await store.close();
  });

  it.each([
    ['sharded', false],
    ['both', true],
  ] as const)(
    "announces every commit from the commit script itself on the room's channel, naming its store as the origin (COMMIT_NOTICES=%s)",
    async (commitNotices, broadcast) => {
      const keyPrefix = newPrefix();
      const store = await openRedisStore({ url, keyPrefix, commitNotices });
      const listener = new Redis(url);
      const slug = 'ann0unceroom';
      const heard: unknown[] = [];
      const broadcasts: unknown[] = [];
      listener.on('smessage', (channel: string, text: string) => {
        expect(channel).toBe(`${keyPrefix}room:{${slug}}:commits`);
        heard.push(JSON.parse(text));
      });
      listener.on('message', (_channel: string, text: string) => broadcasts.push(JSON.parse(text)));
      await listener.ssubscribe(`${keyPrefix}room:{${slug}}:commits`);
      await listener.subscribe(`${keyPrefix}commits`);
      try {
        await store.commit({
          slug,
          expected_version: 0,
          snapshot: '{}',
          events: [],
          receipts: [],
          next_deadline: null,
        });
        await store.commit({
          slug,
          expected_version: 1,
          snapshot: '{}',
          events: [event(1), event(2)],
          receipts: [],
          next_deadline: null,
        });
        // A refused commit announces nothing.
        await expect(
          store.commit({ slug, expected_version: 1, snapshot: '{}', events: [], receipts: [], next_deadline: null }),
        ).rejects.toThrow();
        // Messages arrive in order: once the next commit's is heard, a refused one's would have been.
        await store.commit({
          slug,
          expected_version: 2,
          snapshot: '{}',
          events: [event(3)],
          receipts: [],
          next_deadline: null,
        });
        await eventually(async () => heard.length >= 3, 5_000);
        expect(store.commitOrigin).toMatch(/^[0-9a-f-]{36}$/);
        const notices = [0, 2, 3].map((head) => ({ origin: store.commitOrigin, slug, head }));
        expect(heard).toEqual(notices);
        // The broadcast channel of earlier versions hears them only during an upgrade, flagged.
        if (broadcast) await eventually(async () => broadcasts.length >= 3, 5_000);
        expect(broadcasts).toEqual(broadcast ? notices.map((notice) => ({ ...notice, sharded: true })) : []);
      } finally {
        await listener.quit();
        await store.close();
      }
    },
  );

  it("writes a room's deadline-index entry only when the commit may have moved it", async () => {
    const keyPrefix = newPrefix();
    const [a, b] = await Promise.all([openRedisStore({ url, keyPrefix }), openRedisStore({ url, keyPrefix })]);
    const raw = new Redis(url);
    const slug = 'dl1ndexroom';
    const score = async () => {
      for (const key of await raw.keys(`${keyPrefix}deadlines:{d*`)) {
        const value = await raw.zscore(key, slug);
        if (value !== null) return Number(value);
      }
      return null;
    };
    // The index update is not awaited by the commit; a read on the same connection comes after it.
    const commit = async (store: typeof a, expected_version: number, next_deadline: number | null) => {
      await store.commit({ slug, expected_version, snapshot: '{}', events: [], receipts: [], next_deadline });
      await store.nextDeadline();
    };
    try {
      await commit(a, 0, 100);
      expect(await score()).toBe(100);
      // The entry is what this process wrote at the version the next commit follows: not sent again
      // (removed by hand here only to show it is not rewritten).
      await raw.del(...(await raw.keys(`${keyPrefix}deadlines:{d*`)));
      await commit(a, 1, 100);
      expect(await score()).toBeNull();
      // A deadline that moves is written.
      await commit(a, 2, 200);
      expect(await score()).toBe(200);
      // Another process commits in between (and writes its own entry); this one's next commit follows a
      // version it did not make, so it writes again even with the deadline it wrote last.
      await commit(b, 3, 300);
      expect(await score()).toBe(300);
      await commit(a, 4, 200);
      expect(await score()).toBe(200);
      await commit(a, 5, null);
      expect(await score()).toBeNull();
    } finally {
      await raw.quit();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('fails an in-flight commit as unavailable when its connection drops, without replaying it', async () => {
    const store = await openRedisStore({ url, keyPrefix: newPrefix() });
    await store.ping();
    const raw = new Redis(url);
    await raw.client('PAUSE', 2_000, 'WRITE');
    const commit = store.commit({
      slug: 'cut',
      expected_version: 0,
      snapshot: '{}',
      events: [],
      receipts: [],
      next_deadline: null,
    });
    const outcome = commit.then(
      () => 'committed',
      (error: unknown) => error,
    );
    await sleep(50);
    const started = Date.now();
    await raw.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    expect(await outcome).toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_000);
    await raw.client('UNPAUSE');
    await raw.quit();
    await waitUntilServing(() => store.ping());
    expect(await store.load('cut')).toBeNull();
    await store.close();
  });

  it('fails to open with StoreUnavailableError when nothing listens', async () => {
    await expect(openRedisStore({ url: 'redis://127.0.0.1:1' })).rejects.toThrow(StoreUnavailableError);
  });

  it('reports StoreUnavailableError while Redis is down and recovers on its own', async () => {
    const store = await openRedisStore({ url, keyPrefix: newPrefix() });
    await store.commit({
      slug: 'before',
      expected_version: 0,
      snapshot: '{}',
      events: [],
      receipts: [],
      next_deadline: null,
    });
    await server!.stop();
    try {
      for (const attempt of [() => store.ping(), () => store.load('before'), () => store.lock('before', 1_000, 100)]) {
        const started = Date.now();
        await expect(attempt()).rejects.toThrow(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(1_000);
      }
    } finally {
      await server!.restart();
    }
    await waitUntilServing(() => store.ping());
    // The server kept nothing, but the same store instance works again, scripts included.
    expect(await store.load('before')).toBeNull();
    const created = await store.commit({
      slug: 'after',
      expected_version: 0,
      snapshot: '{}',
      events: [event(1)],
      receipts: [],
      next_deadline: null,
    });
    expect(created.version).toBe(1);
    await store.close();
  });
});

async function waitUntilServing(probe: () => Promise<void>): Promise<void> {
  const giveUpAt = Date.now() + 10_000;
  for (;;) {
    try {
      await probe();
      return;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || Date.now() > giveUpAt) throw error;
      await sleep(50);
    }
  }
}
