/**
 * `migrateToRedis` carries the transparency log into a real Redis Cluster (3 masters + 3 replicas):
 * every log key is in the `{~log}` slot, so the staged import, the script that renames it into place
 * and the queue cut all run on one master. The copy is part for part the source's, and an
 * integrator on the Cluster takes over from the copied checkpoint and extends the same tree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { signingKeyFromSeed } from '../../../src/receipts/keys.js';
import { migrateToRedis } from '../../../src/store/migrate-to-redis.js';
import type { RoomStore } from '../../../src/store/port.js';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import type { LogEntry, LogPart, LogStore } from '../../../src/store/tlog-port.js';
import { Integrator } from '../../../src/tlog/integrator.js';
import { NoteSigner } from '../../../src/tlog/note-signer.js';
import { startRedisCluster } from '../../support/redis-cluster.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-tlog-cluster-'));
const cluster = await startRedisCluster();
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cluster?.stop();
});

const signer = new NoteSigner('cluster.test/log', signingKeyFromSeed(new Uint8Array(32).fill(9)));
/** A leaf of these tests' stand-in receipts: the data is the receipt itself (`jws-N`, hash `sha256:N`). */
const leaves = {
  entry: (jws: string): LogEntry => ({ data: jws, receipt_hash: `sha256:${jws.slice('jws-'.length)}` }),
};

const integrator = (store: RoomStore) =>
  new Integrator(
    store,
    () => signer,
    leaves,
    (error) => {
      throw error;
    },
    { intervalMs: 1000, leaseMs: 10_000, sweepMs: 3_600_000, batchSize: 11 },
  );

function queueReceipts(file: string, from: number, count: number): void {
  const db = new Database(file);
  try {
    const insert = db.prepare('INSERT INTO tlog_queue (slug, sequence, jws, receipt_hash) VALUES (?, ?, ?, ?)');
    for (let n = from; n < from + count; n++) insert.run(`r${n % 2}`, Math.floor(n / 2) + 1, `jws-${n}`, `sha256:${n}`);
  } finally {
    db.close();
  }
}

/** The log's content, whatever the part boundaries: entries and each tile level joined, hashes sorted. */
async function contentOf(log: LogStore): Promise<unknown> {
  const joined: Record<string, unknown[]> = {};
  const tiles = new Map<number, string>();
  for await (const part of log.exportLog(4) as AsyncIterable<LogPart>) {
    if (part.kind === 'tiles')
      tiles.set(part.level, (tiles.get(part.level) ?? '') + Buffer.from(part.hashes).toString('hex'));
    else if (part.kind === 'state') joined.state = [part];
    else {
      const items = Object.values(part).find(Array.isArray) as unknown[];
      joined[part.kind] = [...(joined[part.kind] ?? []), ...items];
    }
  }
  for (const kind of ['index', 'rooms'])
    joined[kind]?.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return { ...joined, tiles: [...tiles] };
}

describe.skipIf(cluster === null)('the transparency log moved into a Redis Cluster', () => {
  it('lands part for part, and an integrator on the Cluster extends the same tree', async () => {
    const file = join(dir, 'conclave.db');
    const source = await openSqliteStore({ file });
    queueReceipts(file, 0, 50);
    const sequencer = integrator(source);
    await sequencer.integrateNow();
    await sequencer.stop();
    queueReceipts(file, 50, 3);
    const expected = await contentOf(source.tlog);
    await source.close();

    const redis = { url: cluster!.url, cluster: true, keyPrefix: 'cl:' };
    const report = await migrateToRedis({ dataDir: dir, redis });
    expect(report.log).toMatchObject({ result: 'copied', leaves: 50, queued: 3 });
    const target = await openRedisStore(redis);
    try {
      expect(await contentOf(target.tlog)).toEqual(expected);
      expect((await migrateToRedis({ dataDir: dir, redis })).log.result).toBe('unchanged');
      const next = integrator(target);
      await next.integrateNow();
      expect(next.halted).toBeNull();
      expect((await target.tlog.state()).size).toBe(53);
      await next.stop();
    } finally {
      await target.close();
    }
  }, 120_000);
});
