/**
 * Two processes on one Redis: process A writes a room while process B reads and writes it. B's
 * store calls are held at chosen points (a load answered but not yet delivered, an archive read or
 * an idempotency lookup in flight), so reads and refreshes interleave in a fixed order. Whatever
 * the order, every read answers one committed state and every turn runs: never `decision <id>
 * missing from room <slug>` (docs/architecture.md, "One room, many readers").
 * And the same two processes writing one room in turn, as round robin spreads MCP calls: a process
 * whose cached room is current writes without reading it again (docs/architecture.md, "One room,
 * many processes").
 */
import { randomUUID } from 'node:crypto';
import { ResponseSeal } from '../../../src/runtime/idempotency-seal.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RoomState } from '../../../src/runtime/room-state.js';
import type { RoomStore } from '../../../src/store/port.js';
import { startRedisServer, type TestRedisServer } from '../../support/redis-server.js';
import { call, type RunningService, startService } from '../../support/service.js';
import { discuss } from '../../support/turns.js';

let redis: TestRedisServer | null = null;
let a: RunningService;
let b: RunningService;
let slug: string;
let creatorToken: string;

beforeAll(async () => {
  redis = await startRedisServer();
  if (!redis) throw new Error('redis-server is required for this test');
  const env = { STORE: 'redis', REDIS_URL: redis.url, CONCLAVE_SIGNING_KEY_SEED: 'cd'.repeat(32) };
  a = await startService({ env });
  b = await startService({ env });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await redis?.stop();
});

beforeEach(async () => {
  // An open decision: the room's actor holds it as a child, which is what a stopped actor loses.
  const created = await call(a.base, 'POST', '/api/rooms', {
    body: { question: 'Which one?', options: ['a', 'b'], config: { early_close: true, settle_window: 0 } },
  });
  expect(created.status).toBe(200);
  slug = created.body.slug;
  creatorToken = created.body.creator_token;
  expect((await b.service.services.registry.read(slug))?.decisions).toHaveLength(1);
});

type Outcome<T> = { value: T } | { error: unknown };

/** Settles a call as a value, so an early failure is reported by the test, not as an unhandled rejection. */
function outcome<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function answered<T>(settled: Outcome<T>): T {
  if ('error' in settled) throw settled.error;
  return settled.value;
}

/** A write on process A (a new seat): B's cached room is now one version behind the store. */
async function writeOnA(): Promise<void> {
  const joined = await call(a.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'elsewhere' } });
  expect(joined.status).toBe(200);
}

/** A read on B whose load is answered with B's cached version, then A writes: the answer arrives on release. */
async function lateReadThenWriteOnA(): Promise<{ late: Promise<Outcome<RoomState | null>>; lateLoad: Held }> {
  const lateLoad = holdNext(b.service.store, 'loadIfChanged');
  const late = outcome(b.service.services.registry.read(slug));
  await lateLoad.entered;
  await writeOnA();
  return { late, lateLoad };
}

type Held = { entered: Promise<void>; release(): void };

/**
 * Holds the next call of a store method (B has the room cached, so its refreshes check it with
 * loadIfChanged): it runs against Redis at once, but its answer reaches the
 * caller only on release() (a reply delivered late, as when the event loop is busy). Later calls pass.
 */
function holdNext(store: RoomStore, method: 'loadIfChanged' | 'archivedDecisions' | 'idempotency'): Held {
  const original = store[method] as (...args: unknown[]) => Promise<unknown>;
  let enter!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => {
    enter = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let armed = true;
  (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    if (!armed) return original.apply(store, args);
    armed = false;
    const answer = await original.apply(store, args);
    enter();
    await released;
    return answer;
  };
  return {
    entered,
    release: () => {
      (store as unknown as Record<string, unknown>)[method] = original;
      release();
    },
  };
}

/** Waits until a held call is reached, or a short while when the code under test serialises it away. */
async function reached(held: Held): Promise<void> {
  await Promise.race([held.entered, sleep(300)]);
}

describe('reads on a process whose cached room another process just changed', () => {
  it('a read whose load was answered before the write never gets the actor a newer refresh is replacing', async () => {
    const store = b.service.store;
    const registry = b.service.services.registry;
    const before = (await registry.read(slug))!.version;

    // Read 1 is answered with the cached version, but its answer arrives late.
    const { late, lateLoad } = await lateReadThenWriteOnA();
    // Read 2 sees the newer version and refreshes; its archive read is in flight.
    const archive = holdNext(store, 'archivedDecisions');
    const fresh = outcome(registry.read(slug));
    await reached(archive);

    lateLoad.release();
    await sleep(20);
    archive.release();
    const [lateState, freshState] = (await Promise.all([late, fresh])).map(answered);
    expect(lateState!.version).toBeGreaterThanOrEqual(before);
    expect(lateState!.decisions).toHaveLength(1);
    expect(freshState!.version).toBe(before + 1);
    expect(freshState!.decisions).toHaveLength(1);
    // The process serves the newest version afterwards (a late answer never winds the cache back).
    expect((await registry.read(slug))!.version).toBe(before + 1);
  });

  it('a read answered late never disturbs a batch running on the refreshed room', async () => {
    const store = b.service.store;
    const registry = b.service.services.registry;
    const before = (await registry.read(slug))!.version;

    const { late, lateLoad } = await lateReadThenWriteOnA();
    // A batch of two turns on B: the first looks up its idempotency record, which is in flight.
    const lookup = holdNext(store, 'idempotency');
    const first = outcome(
      registry.execute(
        slug,
        discuss('first', {
          idempotency: { scope: `${slug}|race-${randomUUID()}`, fingerprint: 'f', seal: raceSeal() },
        }),
      ),
    );
    const second = outcome(registry.execute(slug, discuss('second')));
    await reached(lookup);

    lateLoad.release();
    await sleep(20);
    lookup.release();
    const outcomes = await Promise.all([late, first, second]);
    expect(outcomes.map((o) => ('error' in o ? String(o.error) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
    const after = (await registry.read(slug))!;
    expect(after.version).toBe(before + 2);
    expect(after.decisions).toHaveLength(1);
  });

  it('reads racing a refresh that is still reading the archive get a whole room', async () => {
    const store = b.service.store;
    const registry = b.service.services.registry;
    // A resolves the decision: it leaves the room's actor for the archive, which B has not read yet.
    const chosen = await call(a.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: creatorToken,
      body: { choice: 'a' },
    });
    expect(chosen.body.status).toBe('resolved');
    // The first refresh reads the archive; reads arriving meanwhile must not get a half-loaded room.
    const archive = holdNext(store, 'archivedDecisions');
    const first = outcome(registry.read(slug));
    await reached(archive);
    const others = [1, 2, 3].map(() => outcome(registry.read(slug)));
    await sleep(20);
    archive.release();
    for (const state of (await Promise.all([first, ...others])).map(answered)) {
      expect(state!.decisions.map((d) => d.phase)).toEqual(['resolved']);
    }
  });

  it('a read whose load meets the room deleted before its archive is read answers not found', async () => {
    const registry = b.service.services.registry;
    const chosen = await call(a.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: creatorToken,
      body: { choice: 'a' },
    });
    expect(chosen.body.status).toBe('resolved');
    // B loads the room (its decision now archived), and A deletes the room before B reads the archive.
    const load = holdNext(b.service.store, 'loadIfChanged');
    const read = outcome(registry.read(slug));
    await load.entered;
    const deleted = await call(a.base, 'DELETE', `/api/rooms/${slug}`, {
      token: creatorToken,
      headers: { 'x-confirm-delete': slug },
    });
    expect(deleted.status).toBe(200);
    load.release();
    expect(answered(await read)).toBeNull();
  });
});

/** A seal for a turn's idempotency record, as an anonymous REST call from loopback would have. */
function raceSeal(): ResponseSeal {
  return new ResponseSeal({
    idempotencyKey: randomUUID(),
    credentialScope: 'ip:127.0.0.1',
    operation: 'discuss',
    clientAddress: '127.0.0.1',
  });
}

/**
 * Counts the room reads a store makes: full loads, freshness checks, and locks whose round trip
 * brought the room along because it was not what the process had cached.
 */
function countReads(store: RoomStore): { reads(): number; stop(): void } {
  const load = store.load.bind(store);
  const loadIfChanged = store.loadIfChanged.bind(store);
  const lock = store.lock.bind(store);
  let reads = 0;
  store.lock = async (...args) => {
    const held = await lock(...args);
    if (held.loaded !== undefined) reads++;
    return held;
  };
  store.load = (slug) => {
    reads++;
    return load(slug);
  };
  store.loadIfChanged = (slug, known) => {
    reads++;
    return loadIfChanged(slug, known);
  };
  return {
    reads: () => reads,
    stop: () => {
      store.load = load;
      store.loadIfChanged = loadIfChanged;
      store.lock = lock;
    },
  };
}

async function conflicts(service: RunningService): Promise<number> {
  const text = (await fetch(`${service.base}/metrics`).then((r) => r.text())) as string;
  return Number(/^conclave_room_commit_conflicts_total (\S+)$/m.exec(text)?.[1] ?? 0);
}

describe('one room written by two processes in turn', () => {
  it('reads the room only after the other process wrote it, and never commits on a stale cache', async () => {
    const created = await call(a.base, 'POST', '/api/rooms', {
      body: { question: 'Which one?', options: ['a', 'b'], config: { type: 'persistent' } },
    });
    expect(created.status).toBe(200);
    const slug = created.body.slug as string;
    const registries = [a.service.services.registry, b.service.services.registry];
    const counters = [countReads(a.service.store), countReads(b.service.store)];
    const conflictsBefore = (await conflicts(a)) + (await conflicts(b));
    try {
      // A again: its cache is current, so the lock's own read suffices.
      await registries[0]!.execute(slug, discuss('a, warm'));
      expect(counters.map((c) => c.reads())).toEqual([0, 0]);
      // B has never seen the room: one full load. Then A, behind B's write: one read.
      await registries[1]!.execute(slug, discuss('b, first'));
      expect(counters[1]!.reads()).toBe(1);
      await registries[0]!.execute(slug, discuss('a, after b'));
      expect(counters[0]!.reads()).toBe(1);
      // In turn: each write reads once (the other process wrote last); twice on one process reads nothing more.
      for (let i = 0; i < 6; i++) await registries[i % 2 === 0 ? 1 : 0]!.execute(slug, discuss(`turn ${i}`));
      expect(counters.map((c) => c.reads())).toEqual([4, 4]);
      await registries[0]!.execute(slug, discuss('a, warm again'));
      expect(counters[0]!.reads()).toBe(4);
    } finally {
      for (const counter of counters) counter.stop();
    }
    const state = (await registries[1]!.read(slug))!;
    // Created (1 version) + 10 writes; every one of the 10 messages is in the log.
    expect(state.version).toBe(11);
    const events = await b.service.store.events(slug, 0, 100);
    expect(events.filter((e) => e.event_type === 'discussion.posted')).toHaveLength(10);
    expect((await conflicts(a)) + (await conflicts(b))).toBe(conflictsBefore);
  });
});

describe('a process waiting for a room another process holds', () => {
  it('commits the turns that queued while it waited in the same batch as the one it waited for', async () => {
    const created = await call(a.base, 'POST', '/api/rooms', {
      body: { question: 'Which one?', options: ['a', 'b'], config: { type: 'persistent' } },
    });
    const slug = created.body.slug as string;
    const registry = a.service.services.registry;
    const versionBefore = (await registry.read(slug))!.version;
    // B holds the room; A's first turn starts a drain that waits for the lock, the next two queue.
    const held = await b.service.store.lock(slug, 10_000, 0);
    const first = registry.execute(slug, discuss('first'));
    await sleep(50);
    const later = [registry.execute(slug, discuss('second')), registry.execute(slug, discuss('third'))];
    await sleep(50);
    await held.release();
    const heads = (await Promise.all([first, ...later])).map((turn) => turn.result.head);
    // One batch: one commit, one version; the three messages are consecutive events of it.
    expect((await registry.read(slug))!.version).toBe(versionBefore + 1);
    expect(heads).toEqual([heads[0], heads[0]! + 1, heads[0]! + 2]);
  });

  it('fails only the turns whose wait ran out; a turn that queued late waits on its own', async () => {
    const created = await call(a.base, 'POST', '/api/rooms', {
      body: { question: 'Which one?', options: ['a', 'b'], config: { type: 'persistent' } },
    });
    const slug = created.body.slug as string;
    const registry = a.service.services.registry;
    await registry.read(slug);
    const held = await b.service.store.lock(slug, 10_000, 0);
    const first = outcome(registry.execute(slug, discuss('gives up')));
    // Queued 2.5 s into the first turn's 3 s wait for the lock.
    await sleep(2_500);
    const late = outcome(registry.execute(slug, discuss('queued late')));
    const gaveUp = await first;
    expect('error' in gaveUp && (gaveUp.error as Error).name).toBe('StoreUnavailableError');
    await held.release();
    expect(answered(await late).result.body).toBe('queued late');
  });
});
