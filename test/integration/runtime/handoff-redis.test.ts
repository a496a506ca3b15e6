/**
 * One room written by two processes on one Redis in turn, as round robin spreads MCP calls. A
 * process whose cached room is current takes the lock and writes without reading the room again
 * (the lock script reports its version); after the other process wrote, it reads the room once.
 * No write conflicts, nothing lost (docs/architecture.md, "One room, many processes").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoomStore } from '../../../src/store/port.js';
import { startRedisServer, type TestRedisServer } from '../../support/redis-server.js';
import { call, type RunningService, startService } from '../../support/service.js';
import { discuss } from '../../support/turns.js';

let redis: TestRedisServer | null = null;
let a: RunningService;
let b: RunningService;

beforeAll(async () => {
  redis = await startRedisServer();
  if (!redis) throw new Error('redis-server is required for this test');
  const env = { STORE: 'redis', REDIS_URL: redis.url, CONCLAVE_SIGNING_KEY_SEED: 'ce'.repeat(32) };
  a = await startService({ env });
  b = await startService({ env });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await redis?.stop();
});

/** Counts the room reads (full loads and freshness checks) a store makes. */
function countReads(store: RoomStore): { reads(): number; stop(): void } {
  const load = store.load.bind(store);
  const loadIfChanged = store.loadIfChanged.bind(store);
  let reads = 0;
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
