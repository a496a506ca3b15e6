/**
 * Copies one room of an SQLite fixture (a data directory written by an earlier version) into Redis,
 * stored exactly as that version's SQLite store held it: the snapshot, events and receipts, committed
 * as the room's first version. Upgrade tests use it to load old data through the Redis store too.
 */
import path from 'node:path';
import { withFixtureDb } from './fixture-db.js';
import type { StoredEvent, StoredReceipt } from '../../src/store/port.js';
import { openRedisStore, type RedisStore } from '../../src/store/redis-store.js';

export async function copyFixtureRoomToRedis(
  fixtureDir: string,
  slug: string,
  redisUrl: string,
  extra: (store: RedisStore) => Promise<void> = async () => {},
): Promise<void> {
  const { room, events, receipts } = withFixtureDb(path.join(fixtureDir, 'conclave.db'), (db) => {
    const room = db.prepare('SELECT snapshot, next_deadline FROM rooms WHERE slug = ?').get(slug) as {
      snapshot: string;
      next_deadline: number | null;
    };
    const events = (db.prepare('SELECT * FROM events WHERE slug = ? ORDER BY seq').all(slug) as any[]).map(
      ({ slug: _slug, ...row }): StoredEvent => ({ ...row, data: JSON.parse(row.data) }),
    );
    const receipts = db
      .prepare('SELECT sequence, decision_id, jws, receipt_hash FROM receipts WHERE slug = ? ORDER BY sequence')
      .all(slug) as StoredReceipt[];
    return { room, events, receipts };
  });
  const store = await openRedisStore({ url: redisUrl });
  try {
    await store.reserveSlug(slug);
    await store.commit({
      slug,
      expected_version: 0,
      snapshot: room.snapshot,
      events,
      receipts,
      next_deadline: room.next_deadline,
    });
    await extra(store);
  } finally {
    await store.close();
  }
}
