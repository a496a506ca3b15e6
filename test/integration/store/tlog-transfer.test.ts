/**
 * Moving a log between stores through the LogStore port (log-transfer.ts) on real SQLite and a real
 * redis-server: a log of several hundred leaves (two tile levels), many checkpoints, a cosignature
 * and a queue goes SQLite → Redis → SQLite part for part, in parts small enough to cross every page
 * and tile boundary. An integrator on the copy takes over (the copied tiles match the published
 * checkpoint) and extends the same tree. The import lands whole or not at all: a store that holds a
 * log, a foreign fence, and the leftovers of an import that died half-way are each handled.
 */
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';
import { compareLogs, copyLog } from '../../../src/store/log-transfer.js';
import { type RoomStore, StoreConflictError } from '../../../src/store/port.js';
import { openRedisStore, type RedisStore } from '../../../src/store/redis-store.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import { LOG_LEASE_SLUG, type LogEntry, type LogPart, type LogStore } from '../../../src/store/tlog-port.js';
import { Integrator } from '../../../src/tlog/integrator.js';
import { verifyConsistency } from '../../../src/tlog/merkle.js';
import { NoteSigner } from '../../../src/tlog/note-signer.js';
import { parseCheckpoint } from '../../../src/tlog/note.js';
import { MerkleTree } from '../../../src/tlog/tree.js';
import { startRedisServer } from '../../support/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-tlog-transfer-'));
const redis = await startRedisServer();
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await redis?.stop();
});

const signer = new NoteSigner('transfer.test/log', signingKeyFromSeed(new Uint8Array(32).fill(7)));
const sqliteStore = () => openSqliteStore({ file: join(dir, `${randomUUID()}.db`) });
const redisStore = (keyPrefix = `t-${randomUUID().slice(0, 8)}:`) => openRedisStore({ url: redis!.url, keyPrefix });

/** Queues receipts the way the SQLite trigger does (slugs r0..r2 interleaved, each chain in order). */
function queueReceipts(file: string, from: number, count: number): void {
  const db = new Database(file);
  try {
    const insert = db.prepare('INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash) VALUES (?, ?, ?, ?)');
    for (let n = from; n < from + count; n++) {
      const slug = `r${n % 3}`;
      insert.run(slug, Math.floor(n / 3) + 1, `jws-${n}`, `sha256:${n}`);
    }
  } finally {
    db.close();
  }
}

/** A leaf of these tests' stand-in receipts: the data is the receipt itself (`jws-N`, hash `sha256:N`). */
const leaves = {
  entry: (jws: string): LogEntry => ({ data: jws, receipt_hash: `sha256:${jws.slice('jws-'.length)}` }),
};

/** The fixture's receipts are real JWSs: their leaf here is their receipt hash, as the fixture stored it. */
const fixtureLeaves = {
  entry: (jws: string): LogEntry => {
    const hash = `sha256:${createHash('sha256').update(jws).digest('hex')}`;
    return { data: hash, receipt_hash: hash };
  },
};

function integrator(store: RoomStore, leafMaker: { entry(jws: string): LogEntry } = leaves): Integrator {
  return new Integrator(
    store,
    () => signer,
    leafMaker,
    (error) => {
      throw error;
    },
    { intervalMs: 1000, leaseMs: 10_000, sweepMs: 3_600_000, batchSize: 97 },
  );
}

async function contentOf(log: LogStore, chunk: number): Promise<unknown> {
  const tiles = new Map<number, string>();
  const content = {
    entries: [] as unknown[],
    index: [] as [string, number][],
    checkpoints: [] as unknown[],
    rooms: [] as unknown[],
    queue: [] as unknown[],
  };
  let state: unknown = null;
  for await (const part of log.exportLog(chunk) as AsyncIterable<LogPart>) {
    if (part.kind === 'entries') content.entries.push(...part.entries);
    if (part.kind === 'tiles')
      tiles.set(part.level, (tiles.get(part.level) ?? '') + Buffer.from(part.hashes).toString('hex'));
    if (part.kind === 'checkpoints') content.checkpoints.push(...part.checkpoints);
    if (part.kind === 'rooms') content.rooms.push(...part.rooms);
    if (part.kind === 'index') content.index.push(...part.leaves);
    if (part.kind === 'queue') content.queue.push(...part.receipts);
    if (part.kind === 'state') state = part;
  }
  content.rooms.sort();
  content.index.sort((a, b) => a[1] - b[1]);
  return { ...content, tiles: [...tiles], state };
}

describe.skipIf(redis === null)('moving a log between stores', () => {
  it('SQLite → Redis → SQLite part for part; an integrator on the copy extends the same tree', async () => {
    const file = join(dir, 'source.db');
    const source = await openSqliteStore({ file });
    let onRedis: RedisStore | null = null;
    let back: RoomStore | null = null;
    try {
      queueReceipts(file, 0, 600);
      await integrator(source).integrateNow();
      const [witnessed] = await source.tlog.checkpointSizes(100, 1);
      await source.tlog.addCosignature(witnessed!, 'witness.example/w', '— witness.example/w AAAA');
      queueReceipts(file, 600, 10);
      const before = await contentOf(source.tlog, 1000);
      expect((await source.tlog.state()).size).toBe(600);
      expect((before as { tiles: unknown[] }).tiles).toHaveLength(2);

      onRedis = await redisStore();
      expect(await compareLogs(source.tlog, onRedis.tlog)).toEqual({ kind: 'absent' });
      const lease = await onRedis.lock(LOG_LEASE_SLUG, 10_000, 0);
      const report = await copyLog(source.tlog, onRedis.tlog, lease.token, { chunk: 7 });
      expect(report).toMatchObject({ leaves: 600, cosignatures: 1, queued: 10 });
      expect(await contentOf(onRedis.tlog, 13)).toEqual(before);
      const queues = { source: source.tlog, target: onRedis.tlog };
      expect(await compareLogs(source.tlog, onRedis.tlog, queues)).toEqual({ kind: 'same' });
      expect(await onRedis.tlog.indexOf('sha256:599')).toBe(599);
      expect(await onRedis.tlog.entries(598, 5)).toEqual(['jws-598', 'jws-599']);

      back = await sqliteStore();
      const backLease = await back.lock(LOG_LEASE_SLUG, 10_000, 0);
      await copyLog(onRedis.tlog, back.tlog, backLease.token, { chunk: 5 });
      expect(await contentOf(back.tlog, 1000)).toEqual(before);
      await backLease.release();

      // The integrator on Redis reads the tree back from the copied tiles, checks it against the
      // copied checkpoint (it would halt on a mismatch), and sequences the copied queue.
      await lease.release();
      const old = parseCheckpoint((await onRedis.tlog.state()).checkpoint!.split('\n\n')[0]! + '\n');
      const next = integrator(onRedis);
      await next.integrateNow();
      expect(next.halted).toBeNull();
      const grown = await onRedis.tlog.state();
      expect(grown.size).toBe(610);
      const tree = new MerkleTree();
      const hashes = await onRedis.tlog.tileHashes(0, 0, 610);
      tree.append(Array.from({ length: 610 }, (_, i) => hashes.slice(i * 32, i * 32 + 32)));
      expect(verifyConsistency(600, 610, tree.consistency(600, 610), old.root, tree.root())).toBe(true);
      await next.stop();
    } finally {
      await source.close();
      await onRedis?.close();
      await back?.close();
    }
  });

  it('lands whole or not at all: refuses a store holding a log, a foreign fence; clears a dead import', async () => {
    const file = join(dir, `${randomUUID()}.db`);
    const source = await openSqliteStore({ file });
    const prefix = `dead-${randomUUID().slice(0, 8)}:`;
    const target = await redisStore(prefix);
    const client = new Redis(redis!.url);
    try {
      queueReceipts(file, 0, 40);
      await integrator(source).integrateNow();
      const lease = await target.lock(LOG_LEASE_SLUG, 10_000, 0);

      const foreign = await target.tlog.importLog('not-the-lease');
      await foreign.write({ kind: 'state', size: 0, published: 0 });
      await expect(foreign.finish()).rejects.toBeInstanceOf(StoreConflictError);
      await foreign.abandon();
      // An import that dies half-way leaves staged keys only: the store holds no log yet.
      const dead = await target.tlog.importLog(lease.token);
      for await (const part of source.tlog.exportLog(3)) {
        await dead.write(part);
        if (part.kind === 'tiles') break;
      }
      expect(await client.keys(`${prefix}tlog:{~log}:v2:import:*`)).not.toHaveLength(0);
      expect(await compareLogs(source.tlog, target.tlog)).toEqual({ kind: 'absent' });
      await copyLog(source.tlog, target.tlog, lease.token, { chunk: 3 });
      expect(await client.keys(`${prefix}tlog:{~log}:v2:import:*`)).toEqual([]);
      expect(await contentOf(target.tlog, 100)).toEqual(await contentOf(source.tlog, 100));

      // A second copy onto the log now there is refused at the switch, and leaves nothing behind.
      await expect(copyLog(source.tlog, target.tlog, lease.token)).rejects.toThrow(/already holds a transparency log/);
      expect(await client.keys(`${prefix}tlog:{~log}:v2:import:*`)).toEqual([]);
      const sqliteTarget = await sqliteStore();
      try {
        const own = integrator(sqliteTarget);
        await own.integrateNow(); // publishes its empty tree: a log of its own
        await own.stop();
        const sqliteLease = await sqliteTarget.lock(LOG_LEASE_SLUG, 10_000, 0);
        await expect(copyLog(source.tlog, sqliteTarget.tlog, sqliteLease.token)).rejects.toBeInstanceOf(
          StoreConflictError,
        );
      } finally {
        await sqliteTarget.close();
      }
      await lease.release();
    } finally {
      client.disconnect();
      await source.close();
      await target.close();
    }
  });

  it('moves both logs of an upgraded store: staged apart, the shared queue once, either refused when held', async () => {
    // The fixture's v1 log (4 leaves, checkpoints 0, 1, 2, 4, one receipt queued) is the frozen log.
    const file = join(dir, `${randomUUID()}.db`);
    copyFileSync(join('test/fixtures/pre-commitment-log', 'conclave.db'), file);
    const source = await openSqliteStore({ file });
    const prefix = `both-${randomUUID().slice(0, 8)}:`;
    const target = await redisStore(prefix);
    const client = new Redis(redis!.url);
    try {
      const frozenBefore = await contentOf(source.frozenTlog, 1000);
      expect((frozenBefore as { state: unknown }).state).toEqual({ kind: 'state', size: 4, published: 4 });
      // The frozen log carries no queue; the live one (still empty) carries the shared queue.
      expect((frozenBefore as { queue: unknown[] }).queue).toEqual([]);
      expect((await contentOf(source.tlog, 1000)) as { queue: unknown[] }).toMatchObject({
        queue: [expect.objectContaining({ slug: 'w2vfhz2d6d' })],
      });

      // Both imports at once, part for part in turn: neither clears nor overwrites the other's staging.
      const lease = await target.lock(LOG_LEASE_SLUG, 10_000, 0);
      const frozenImport = await target.frozenTlog.importLog(lease.token);
      const liveImport = await target.tlog.importLog(lease.token);
      const frozenParts = source.frozenTlog.exportLog(2)[Symbol.asyncIterator]();
      const liveParts = source.tlog.exportLog(2)[Symbol.asyncIterator]();
      for (let done = { frozen: false, live: false }; !done.frozen || !done.live; ) {
        const f = done.frozen ? null : await frozenParts.next();
        if (f && !f.done) await frozenImport.write(f.value);
        else done.frozen = true;
        const l = done.live ? null : await liveParts.next();
        if (l && !l.done) await liveImport.write(l.value);
        else done.live = true;
      }
      await frozenImport.finish();
      await liveImport.finish();
      expect(await client.keys(`${prefix}tlog:{~log}:import:*`)).toEqual([]);
      expect(await client.keys(`${prefix}tlog:{~log}:v2:import:*`)).toEqual([]);
      expect(await contentOf(target.frozenTlog, 1000)).toEqual(frozenBefore);
      expect(await contentOf(target.tlog, 1000)).toEqual(await contentOf(source.tlog, 1000));
      expect(await client.llen(`${prefix}tlog:{~log}:queue`)).toBe(1);
      expect(await compareLogs(source.frozenTlog, target.frozenTlog)).toEqual({ kind: 'same' });

      // The frozen log cannot carry a queue, and a store that holds either log takes no other.
      const stray = await target.frozenTlog.importLog(lease.token);
      await expect(stray.write({ kind: 'queue', receipts: [] })).rejects.toThrow(/carries no queue/);
      await stray.abandon();
      await expect(copyLog(source.frozenTlog, target.frozenTlog, lease.token)).rejects.toThrow(
        /already holds a transparency log/,
      );
      expect(await contentOf(target.frozenTlog, 1000)).toEqual(frozenBefore);

      // An integrator on the copy back-fills the live log from the copied frozen one, then the queue.
      await lease.release();
      const next = integrator(target, fixtureLeaves);
      await next.integrateNow();
      expect(next.halted).toBeNull();
      expect((await target.tlog.state()).size).toBe(5);
      expect(await target.tlog.queued(10)).toEqual([]);
      await next.stop();

      // And back: a SQLite store that holds a frozen log of its own is refused.
      const back = await openSqliteStore({ file: join(dir, `${randomUUID()}.db`) });
      try {
        const backLease = await back.lock(LOG_LEASE_SLUG, 10_000, 0);
        await copyLog(target.frozenTlog, back.frozenTlog, backLease.token, { chunk: 3 });
        expect(await contentOf(back.frozenTlog, 1000)).toEqual(frozenBefore);
        await expect(copyLog(target.frozenTlog, back.frozenTlog, backLease.token)).rejects.toBeInstanceOf(
          StoreConflictError,
        );
        await backLease.release();
      } finally {
        await back.close();
      }
    } finally {
      client.disconnect();
      await source.close();
      await target.close();
    }
  });
});
