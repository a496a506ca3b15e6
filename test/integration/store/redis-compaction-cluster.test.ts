/**
 * Compact rooms on a real Redis Cluster (docs/architecture.md, Storage, "Compact rooms"): the
 * compaction, the reads and the expansion are scripts over one room's hash slot, so a room
 * built over HTTP compacts, answers every read with the same bytes, and takes a write again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../../src/store/redis-store.js';
import { concludedRoom, readEverything } from '../../support/compact-room.js';
import { eventually } from '../../support/engagement.js';
import { startRedisCluster } from '../../support/redis-cluster.js';
import { startService } from '../../support/service.js';

const cluster = await startRedisCluster();

afterAll(async () => {
  await cluster?.stop();
});

describe.skipIf(cluster === null)('compact rooms on a Redis Cluster', () => {
  it('compacts rooms built over HTTP, answers the same bytes, and expands a room for a write', async () => {
    const env = {
      STORE: 'redis',
      REDIS_URL: cluster?.url ?? '',
      REDIS_KEY_PREFIX: `test-${randomUUID().slice(0, 8)}:`,
      REDIS_COMPACT_AFTER_SECONDS: '0',
    };
    const running = await startService({ env });
    try {
      const rooms = [
        await concludedRoom(running.base, { members: 3, decisions: 2, messages: 4 }),
        await concludedRoom(running.base, { members: 3, decisions: 2, messages: 4 }),
      ];
      await running.service.integrator.integrateNow();
      const before = await Promise.all(rooms.map((room) => readEverything(running.base, room)));
      const store = running.service.store as RedisStore;
      // The lock of each room's last write lingers a moment (redis-room-lease.ts); compaction waits it out.
      let compacted = 0;
      await eventually(async () => {
        compacted += await store.compactConcludedRooms();
        return compacted === 2;
      }, 10_000);
      const after = await Promise.all(rooms.map((room) => readEverything(running.base, room)));
      for (const [i, reads] of after.entries()) {
        expect(Object.keys(reads).filter((read) => reads[read] !== before[i]![read])).toEqual([]);
      }
      // A write to a compacted room (a store-level commit: nothing over HTTP writes a closed room).
      const slug = rooms[0]!.slug;
      const room = (await store.load(slug))!;
      const lock = await store.lock(slug, 5_000, 3_000, room);
      const seq = room.head + 1;
      await store.commit({
        slug,
        expected_version: room.version,
        ...(room.revision ? { expected_revision: room.revision } : {}),
        fence: lock.token,
        snapshot: room.snapshot,
        next_deadline: null,
        events: [
          {
            id: randomUUID(),
            seq,
            event_type: 'message.posted',
            occurred_at: new Date().toISOString(),
            decision_id: null,
            data: {},
            actor: null,
          },
        ],
        receipts: [],
      });
      await lock.release();
      const events = await store.events(slug, 0, 1_000);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
      expect(await store.receipts(slug)).toHaveLength(3);
    } finally {
      await running.stop();
    }
  });
});
