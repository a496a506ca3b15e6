/**
 * The transparency log's storage and integrator on real SQLite and a real redis-server: the fences
 * that make a fork impossible (lease token, expected size, tile continuity, one note per size),
 * and an integrator taking over from one that died between append and publish.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';
import { type RoomStore, StoreConflictError } from '../../../src/store/port.js';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import { LOG_LEASE_SLUG, type QueuedReceipt } from '../../../src/store/tlog-port.js';
import { DEFAULT_INTEGRATOR_OPTIONS, Integrator } from '../../../src/tlog/integrator.js';
import { leafHash } from '../../../src/tlog/merkle.js';
import { NoteSigner } from '../../../src/tlog/note-signer.js';
import { concatHashes } from '../../../src/tlog/tiles.js';
import { startRedisServer } from '../../support/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-tlog-store-'));
const redis = await startRedisServer();
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await redis?.stop();
});

const signer = new NoteSigner('store.test/log', signingKeyFromSeed(new Uint8Array(32).fill(5)));
const leaf = (n: number): QueuedReceipt => ({
  slug: 'room',
  sequence: n,
  jws: `jws-${n}`,
  receipt_hash: `sha256:${n}`,
});
const tileOf = (leaves: QueuedReceipt[], from: number) => ({
  level: 0,
  from,
  hashes: concatHashes(leaves.map((l) => leafHash(new TextEncoder().encode(l.jws)))),
});

const targets: [string, () => Promise<RoomStore>][] = [
  ['sqlite', async () => openSqliteStore({ file: join(dir, `${randomUUID()}.db`) })],
  ['redis', async () => openRedisStore({ url: redis?.url ?? '', keyPrefix: `tlog-${randomUUID().slice(0, 8)}:` })],
];

describe.each(targets)('the log store (%s)', (name, open) => {
  if (name === 'redis' && !redis) throw new Error('redis-server is required');

  it('refuses writes without the lease, off the stored size, or with a gap in a tile', async () => {
    const store = await open();
    try {
      const lease = await store.lock(LOG_LEASE_SLUG, 10_000, 0);
      const batch = {
        expected_size: 0,
        leaves: [leaf(1)],
        tiles: [tileOf([leaf(1)], 0)],
        consumed: 0,
        rooms: { room: 1 },
      };
      await expect(store.tlog.append({ ...batch, fence: 'not-the-lease' })).rejects.toBeInstanceOf(StoreConflictError);
      await expect(store.tlog.append({ ...batch, expected_size: 1, fence: lease.token })).rejects.toBeInstanceOf(
        StoreConflictError,
      );
      await expect(
        store.tlog.append({ ...batch, tiles: [tileOf([leaf(1)], 1)], fence: lease.token }),
      ).rejects.toBeInstanceOf(StoreConflictError);
      await store.tlog.append({ ...batch, fence: lease.token });
      expect(await store.tlog.state()).toEqual({ size: 1, published: 0, checkpoint: null });
      expect(await store.tlog.entries(0, 5)).toEqual(['jws-1']);
      expect(await store.tlog.indexOf('sha256:1')).toBe(0);
      expect(await store.tlog.loggedCounts()).toEqual(new Map([['room', 1]]));

      const note = signer.signCheckpoint(1, new Uint8Array(32).fill(1));
      await expect(store.tlog.publish(2, note, lease.token)).rejects.toBeInstanceOf(StoreConflictError);
      await store.tlog.publish(1, note, lease.token);
      await store.tlog.publish(1, note, lease.token); // the same note again: idempotent
      const other = signer.signCheckpoint(1, new Uint8Array(32).fill(2));
      await expect(store.tlog.publish(1, other, lease.token)).rejects.toBeInstanceOf(StoreConflictError);
      expect(await store.tlog.checkpointAt(1)).toBe(note);
      expect(await store.tlog.checkpointSizes(-1, 10)).toEqual([1]);
      await lease.release();
    } finally {
      await store.close();
    }
  });

  it('a successor publishes what a dead integrator appended; the dead one’s late write is fenced out', async () => {
    const store = await open();
    try {
      const dead = await store.lock(LOG_LEASE_SLUG, 300, 0);
      const leaves = [leaf(1), leaf(2), leaf(3)];
      await store.tlog.append({
        expected_size: 0,
        leaves,
        tiles: [tileOf(leaves, 0)],
        consumed: 0,
        rooms: { room: 3 },
        fence: dead.token,
      });
      // Killed before publishing: its lease lapses.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const errors: unknown[] = [];
      const successor = new Integrator(
        store,
        () => signer,
        (error) => errors.push(error),
        {
          ...DEFAULT_INTEGRATOR_OPTIONS,
          sweepMs: Number.POSITIVE_INFINITY,
        },
      );
      await successor.integrateNow();
      expect(errors).toEqual([]);
      expect(successor.leader).toBe(true);
      const state = await store.tlog.state();
      expect(state.size).toBe(3);
      expect(state.published).toBe(3);
      // The dead integrator's late write is fenced out.
      await expect(
        store.tlog.append({
          expected_size: 3,
          leaves: [leaf(4)],
          tiles: [tileOf([leaf(4)], 3)],
          consumed: 0,
          rooms: { room: 4 },
          fence: dead.token,
        }),
      ).rejects.toBeInstanceOf(StoreConflictError);
      await successor.stop();
    } finally {
      await store.close();
    }
  });
});
