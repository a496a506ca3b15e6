/**
 * The transparency log's storage and integrator on real SQLite and a real redis-server: the fences
 * that make a fork impossible (lease token, expected size, tile continuity, one note per size),
 * an integrator taking over from one that died between append and publish, and how often the
 * integrator writes to the store for its lease.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';
import { type RoomLock, type RoomStore, StoreConflictError } from '../../../src/store/port.js';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import { LOG_LEASE_SLUG, type LogEntry } from '../../../src/store/tlog-port.js';
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
const leaf = (n: number): LogEntry => ({ data: `leaf-${n}`, receipt_hash: `sha256:${n}` });
const tileOf = (leaves: LogEntry[], from: number) => ({
  level: 0,
  from,
  hashes: concatHashes(leaves.map((l) => leafHash(new TextEncoder().encode(l.data)))),
});
/** These tests queue nothing: the leaf of a receipt is not what they are about. */
const noLeaves = {
  entry(): LogEntry {
    throw new Error('nothing is queued in these tests');
  },
};

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
      expect(await store.tlog.entries(0, 5)).toEqual(['leaf-1']);
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
        noLeaves,
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

  /** The store, with its lease writes counted: lock attempts (and those refused) and renewals. */
  function counting(store: RoomStore) {
    const counts = { attempts: 0, refused: 0, renewals: 0 };
    const lock = store.lock.bind(store);
    store.lock = async (slug, ttlMs, waitMs) => {
      if (slug !== LOG_LEASE_SLUG) return lock(slug, ttlMs, waitMs);
      counts.attempts += 1;
      const taken: RoomLock = await lock(slug, ttlMs, waitMs).catch((error: unknown) => {
        counts.refused += 1;
        throw error;
      });
      return {
        ...taken,
        renew: () => {
          counts.renewals += 1;
          return taken.renew();
        },
      };
    };
    return counts;
  }

  /** An integrator with the shipped cadence, no sweeps, on this clock. */
  const integratorOn = (store: RoomStore, now?: () => number) =>
    new Integrator(
      store,
      () => signer,
      noLeaves,
      () => undefined,
      { ...DEFAULT_INTEGRATOR_OPTIONS, sweepMs: Number.POSITIVE_INFINITY, now },
    );

  it('the holder renews its lease only once a third of it has passed, not on every pass', async () => {
    const store = await open();
    let now = 1_000_000;
    const counts = counting(store);
    const integrator = integratorOn(store, () => now);
    try {
      await integrator.integrateNow();
      expect(integrator.leader).toBe(true);
      expect(counts).toEqual({ attempts: 1, refused: 0, renewals: 0 });
      const third = DEFAULT_INTEGRATOR_OPTIONS.leaseMs / 3;
      // Passes at the shipped interval until just short of a third of the lease: no store write.
      while (now + DEFAULT_INTEGRATOR_OPTIONS.intervalMs < 1_000_000 + third) {
        now += DEFAULT_INTEGRATOR_OPTIONS.intervalMs;
        await integrator.integrateNow();
      }
      expect(counts).toEqual({ attempts: 1, refused: 0, renewals: 0 });
      now = 1_000_000 + third;
      await integrator.integrateNow();
      expect(counts).toEqual({ attempts: 1, refused: 0, renewals: 1 });
      // Counted again from the renewal.
      now += third - 1;
      await integrator.integrateNow();
      expect(counts.renewals).toBe(1);
      now += 1;
      await integrator.integrateNow();
      expect(counts.renewals).toBe(2);
      expect(integrator.leader).toBe(true);
    } finally {
      await integrator.stop();
      await store.close();
    }
  });

  it('a process without the lease tries to take it every sixth of the lease, not on every pass', async () => {
    const store = await open();
    const held = await store.lock(LOG_LEASE_SLUG, 60_000, 0); // another process holds it
    const counts = counting(store);
    const integrator = integratorOn(store);
    /** Until the n-th refused attempt's pass has ended and scheduled the next (all microtasks after it). */
    const refusedTimes = async (n: number) => {
      // Not vi.waitFor: under fake timers it advances them, which would run more passes.
      const until = Date.now() + 5000;
      while (counts.refused < n && Date.now() < until) await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(counts.refused).toBe(n);
    };
    // Only the integrator's timers are faked: the stores' own I/O keeps running.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      integrator.start();
      const { intervalMs, leaseMs } = DEFAULT_INTEGRATOR_OPTIONS;
      await vi.advanceTimersByTimeAsync(intervalMs);
      await refusedTimes(1);
      await vi.advanceTimersByTimeAsync(leaseMs / 6 - 1);
      expect(counts.attempts).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await refusedTimes(2);
      await vi.advanceTimersByTimeAsync(leaseMs / 6);
      await refusedTimes(3);
      expect(counts.attempts).toBe(3);
      expect(integrator.leader).toBe(false);
    } finally {
      vi.useRealTimers();
      await integrator.stop();
      await held.release();
      await store.close();
    }
  });
});
