/**
 * `conclave migrate --to redis` carries the transparency log as it is. A SQLite service publishes a
 * log over several rooms and checkpoints (one witness cosignature; a clock that stepped back, so the
 * log's commit order is not the order of signing times; receipts left queued by a process that died
 * before sequencing them). After the move, a service on Redis at the same URL serves every old
 * checkpoint byte for byte, appends what was queued and new receipts, and every checkpoint published
 * before the move is consistent with the first after it; `conclave verify` on a migrated room passes,
 * log check and the remembered checkpoint's consistency across the move included. A Redis that
 * holds another log, or whose log lease a running service holds, is refused before anything is written.
 *
 * Before the log was carried, the Redis integrator rebuilt it from the receipts by signing time: a
 * different tree, which `conclave verify` reported as a fork (exit 1).
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint, verifyConsistency } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import { SqliteLogStore } from '../../src/store/sqlite-tlog.js';
import type { LogPart, LogStore } from '../../src/store/tlog-port.js';
import { type Run, runCliWithin } from '../cli/run-cli.js';
import { startRedisServer } from '../support/redis-server.js';
import { crawlLog } from '../support/log-crawl.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

/** A log's whole content through the port, in one comparable shape. */
async function contentOf(log: LogStore): Promise<unknown> {
  const entries: unknown[] = [];
  const tiles = new Map<number, string>();
  const checkpoints: unknown[] = [];
  const rooms: [string, number][] = [];
  const index: [string, number][] = [];
  const queue: unknown[] = [];
  let state: unknown = null;
  for await (const part of log.exportLog(3) as AsyncIterable<LogPart>) {
    if (part.kind === 'entries') entries.push(...part.entries);
    if (part.kind === 'tiles')
      tiles.set(part.level, (tiles.get(part.level) ?? '') + Buffer.from(part.hashes).toString('hex'));
    if (part.kind === 'checkpoints') checkpoints.push(...part.checkpoints);
    if (part.kind === 'rooms') rooms.push(...part.rooms);
    if (part.kind === 'index') index.push(...part.leaves);
    if (part.kind === 'queue') queue.push(...part.receipts);
    if (part.kind === 'state') state = part;
  }
  index.sort((a, b) => a[1] - b[1]);
  return { entries, index, tiles: [...tiles], checkpoints, rooms: rooms.sort(), queue, state };
}

/**
 * Everything committed so far sequenced and published: integrateNow may join a pass the service's
 * timer began before the last commit, so a second pass, begun after it, follows.
 */
async function settle(svc: RunningService): Promise<void> {
  await svc.service.integrator.integrateNow();
  await svc.service.integrator.integrateNow();
}

function sqliteLog(file: string): { log: SqliteLogStore; close(): void } {
  const db = new Database(file, { readonly: true });
  const run = async <T>(work: () => T): Promise<T> => work();
  return { log: new SqliteLogStore(db, run, run), close: () => db.close() };
}

describe.skipIf(redis === null)('conclave migrate --to redis keeps the transparency log', () => {
  const clock = new ManualClock();
  let dir: string;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let onRedis: RunningService | null = null;
  const rooms: { slug: string; token: string }[] = [];
  /** Every checkpoint the SQLite service published, by size. */
  let published: Map<number, string>;
  let queued: { slug: string; sequence: number }[];

  const cli = (...args: string[]): Promise<Run> => runCliWithin(60_000, env, ...args);
  const migrate = (prefix = 'conclave:', ...output: string[]) =>
    cli(
      ...output,
      'migrate',
      '--to',
      'redis',
      '--redis-url',
      redis!.url,
      '--redis-key-prefix',
      prefix,
      '--data-dir',
      dataDir,
    );
  const verify = (base: string, room: { slug: string; token: string }) =>
    cli('verify', `${base}/r/${room.slug}`, '--token', room.token, '--log-wait', '5');

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-migrate-log-'));
    dataDir = path.join(dir, 'data');
    env = { ...process.env, LOG_LEVEL: 'silent', CONCLAVE_CONFIG: path.join(dir, 'cli', 'config.json') };
    const sqlite = await startService({ clock, dataDir });
    port = Number(new URL(sqlite.base).port);
    const integrate = () => settle(sqlite);
    rooms.push(await roomWithReceipts(sqlite.base, clock, true));
    await integrate();
    rooms.push(await roomWithReceipts(sqlite.base, clock));
    await integrate();
    // The clock steps back an hour (an NTP correction): this room's receipts are signed before the
    // earlier rooms' but committed after them. The log keeps commit order; a log rebuilt from the
    // receipts by signing time would not.
    clock.set(clock.now() - 3_600_000);
    rooms.push(await roomWithReceipts(sqlite.base, clock, true));
    await integrate();
    const store = sqlite.service.store;
    const [firstWitnessed] = await store.tlog.checkpointSizes(0, 1);
    await store.tlog.addCosignature(firstWitnessed!, 'witness.example/w1', `— witness.example/w1 ${'A'.repeat(100)}`);

    // The CLI remembers the latest checkpoint it saw: the one after the move must extend it.
    const before = await verify(sqlite.base, rooms[0]!);
    expect(before.stderr).toBe('');
    expect(before.code).toBe(0);

    // The process dies after committing a room but before sequencing its receipts: they stay queued.
    await sqlite.service.integrator.stop();
    const db = new Database(path.join(dataDir, 'conclave.db'));
    db.prepare("INSERT INTO locks (slug, token, expires_at) VALUES ('~log', 'dead-process', ?)").run(
      Date.now() + 3_600_000,
    );
    db.close();
    rooms.push(await roomWithReceipts(sqlite.base, clock));
    await sqlite.stop({ keepData: true });

    const source = sqliteLog(path.join(dataDir, 'conclave.db'));
    try {
      const state = await source.log.state();
      const sizes = await source.log.checkpointSizes(-1, 100);
      published = new Map();
      for (const size of sizes) published.set(size, (await source.log.checkpointAt(size))!);
      queued = (await source.log.queued(100)).map(({ slug, sequence }) => ({ slug, sequence }));
      expect(state.size).toBe(5);
      expect(published.size).toBeGreaterThanOrEqual(3);
      expect(queued.map((q) => q.slug)).toEqual([rooms[3]!.slug]);
    } finally {
      source.close();
    }
  }, 120_000);

  afterAll(async () => {
    await onRedis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('copies the log as it is: the same parts through the port, and a second run changes nothing', async () => {
    const first = await migrate('conclave:', '--json');
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.log).toEqual({
      result: 'copied',
      leaves: 5,
      checkpoints: published.size,
      cosignatures: 1,
      queued: queued.length,
    });
    const source = sqliteLog(path.join(dataDir, 'conclave.db'));
    const target = await openRedisStore({ url: redis!.url });
    try {
      expect(await contentOf(target.tlog)).toEqual(await contentOf(source.log));
      const again = await migrate();
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('✓ transparency log: already in Redis, unchanged');
      expect(await contentOf(target.tlog)).toEqual(await contentOf(source.log));
    } finally {
      source.close();
      await target.close();
    }
  }, 60_000);

  it('a service on Redis at the same URL extends the log: every old checkpoint is consistent with the new ones', async () => {
    onRedis = await startService({ clock, dataDir, port, env: { STORE: 'redis', REDIS_URL: redis!.url } });
    const base = onRedis.base;
    const verifierKey = (await call(base, 'GET', '/.well-known/svc.json')).body.audit_log.verifier_key as string;
    for (const [size, note] of published) {
      const served = await call(base, 'GET', `/log/checkpoint/${size}`);
      expect(served.status).toBe(200);
      expect(served.text.startsWith(note), `checkpoint ${size}`).toBe(true);
    }
    await settle(onRedis);
    rooms.push(await roomWithReceipts(base, clock, true));
    await settle(onRedis);

    const latest = await verifyCheckpoint((await call(base, 'GET', '/log/checkpoint')).text, verifierKey);
    expect(latest.size).toBe(5 + 1 + 2);
    for (const [size, note] of published) {
      if (size === 0) continue;
      const older = await verifyCheckpoint(note, verifierKey);
      const proof = await call(base, 'GET', `/log/proof/consistency?first=${size}&second=${latest.size}`);
      expect(proof.status).toBe(200);
      expect(verifyConsistency(older, latest, proof.body.consistency_proof), `checkpoint ${size}`).toBe(true);
    }
    // The queued receipts went in first, in the queue's order, before the room created on Redis.
    const outcome = (await call(base, 'GET', `/api/rooms/${rooms[3]!.slug}/outcome`, { token: rooms[3]!.token })).body;
    expect(JSON.stringify(outcome)).toContain('"index":5');
  }, 120_000);

  it('conclave verify passes on a migrated room, proving its remembered checkpoint consistent across the move', async () => {
    const base = onRedis!.base;
    const moved = await verify(base, rooms[0]!);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    const newest = Math.max(...published.keys());
    expect(moved.stdout).toMatch(new RegExp(`checkpoint 8 is consistent with checkpoint ${newest}`));
    const queuedRoom = await verify(base, rooms[3]!);
    expect(queuedRoom.code, queuedRoom.stderr).toBe(0);
  }, 120_000);

  it('refuses a Redis that holds another log, and one whose log lease a running service holds, writing nothing', async () => {
    await onRedis?.stop();
    onRedis = null;
    // The Redis service has grown the log since: it is no longer this store's log.
    const grown = await migrate();
    expect(grown.code).toBe(6);
    expect(grown.stderr).toMatch(/already holds another transparency log: it holds a log of 8 leaves/);
    expect(grown.stderr).toMatch(/Nothing was written/);

    // A running service holds the lease under its prefix: refused, and nothing lands there.
    const prefix = 'busy:';
    const busy = await startService({ env: { STORE: 'redis', REDIS_URL: redis!.url, REDIS_KEY_PREFIX: prefix } });
    try {
      await busy.service.integrator.integrateNow();
      const client = new Redis(redis!.url);
      try {
        const keysBefore = (await client.keys(`${prefix}*`)).sort();
        const refused = await migrate(prefix);
        expect(refused.code).toBe(6);
        expect(refused.stderr).toMatch(/lease/);
        expect((await client.keys(`${prefix}*`)).sort()).toEqual(keysBefore);
      } finally {
        client.disconnect();
      }
    } finally {
      await busy.stop();
    }
  }, 120_000);
});

/**
 * A store upgraded from before the commitment log (test/fixtures/pre-commitment-log: its v1 log is
 * now the frozen one, the live log back-filled from it) holds two logs. Both move: on Redis the frozen
 * log's checkpoints and tiles are served byte for byte as on SQLite, every live checkpoint published
 * before the move is consistent with the first after it, and `conclave verify` on a migrated room
 * proves its remembered live checkpoint consistent across the move. Before both were carried, the
 * Redis service served no frozen log at all (`/log/v1/checkpoint` 404).
 */
describe.skipIf(redis === null)('conclave migrate --to redis keeps both logs of an upgraded store', () => {
  const FIXTURE = path.resolve('test/fixtures/pre-commitment-log');
  const clock = new ManualClock(Date.parse('2026-11-20T10:00:00Z'));
  const prefix = 'upgraded:';
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let onRedis: RunningService | null = null;
  afterAll(async () => {
    await onRedis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the same frozen log and extends the same live log; conclave verify passes', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-migrate-frozen-'));
    const dataDir = path.join(dir, 'data');
    await cp(FIXTURE, dataDir, { recursive: true });
    const tokens = JSON.parse(await readFile(path.join(FIXTURE, 'tokens.json'), 'utf8'));
    const room = { slug: tokens.secret.slug as string, token: tokens.secret.creator as string };
    env = { ...process.env, LOG_LEVEL: 'silent', CONCLAVE_CONFIG: path.join(dir, 'cli', 'config.json') };
    const cli = (...args: string[]): Promise<Run> => runCliWithin(60_000, env, ...args);
    const verify = (base: string) => cli('verify', `${base}/r/${room.slug}`, '--token', room.token, '--log-wait', '5');

    // The upgrade: the SQLite service back-fills the live log from the frozen one, then the queue. It
    // answers at the URL that wrote the fixture (its receipts name their room by it, and so does the
    // position label `conclave verify` checks).
    const fixtureDb = new Database(path.join(dataDir, 'conclave.db'), { readonly: true });
    const [, claims] = (fixtureDb.prepare('SELECT jws FROM receipts LIMIT 1').pluck().get() as string).split('.');
    fixtureDb.close();
    const port = Number(new URL(JSON.parse(Buffer.from(claims!, 'base64url').toString()).iss).port);
    const sqlite = await startService({ clock, dataDir, port });
    await settle(sqlite);
    const discovery = (await call(sqlite.base, 'GET', '/.well-known/svc.json')).body.audit_log;
    const frozenKey = discovery.frozen[0].verifier_key as string;
    const frozenBefore = await crawlLog(sqlite.base, frozenKey, { prefix: '/log/v1', entries: false });
    expect(frozenBefore.latest.size).toBe(4);
    const livePublished = new Map<number, string>();
    for (const size of (await call(sqlite.base, 'GET', '/log/checkpoints')).body.sizes as number[])
      livePublished.set(size, (await call(sqlite.base, 'GET', `/log/checkpoint/${size}`)).text);
    expect(Math.max(...livePublished.keys())).toBe(5);
    const remembered = await verify(sqlite.base);
    expect(remembered.code, remembered.stderr).toBe(0);
    expect(remembered.stdout).toContain('checkpoint 5 is the first seen');
    await sqlite.stop({ keepData: true });

    const moved = await cli(
      '--json',
      'migrate',
      '--to',
      'redis',
      '--redis-url',
      redis!.url,
      '--redis-key-prefix',
      prefix,
      '--data-dir',
      dataDir,
    );
    expect(moved.code, moved.stderr).toBe(0);
    const report = JSON.parse(moved.stdout);
    expect(report.frozenLog).toEqual({ result: 'copied', leaves: 4, checkpoints: 4, cosignatures: 0 });
    expect(report.log).toMatchObject({ result: 'copied', leaves: 5, queued: 0 });
    // The frozen log's entries are kept, as stored (never served), and the queue travelled once.
    const target = await openRedisStore({ url: redis!.url, keyPrefix: prefix });
    const source = new Database(path.join(dataDir, 'conclave.db'), { readonly: true });
    try {
      const frozenEntries = source.prepare('SELECT jws FROM tlog_entries ORDER BY idx').pluck().all();
      expect(await target.frozenTlog.entries(0, 10)).toEqual(frozenEntries);
      expect(await target.tlog.queued(10)).toEqual([]);
    } finally {
      source.close();
      await target.close();
    }

    onRedis = await startService({
      clock,
      dataDir,
      port,
      env: { STORE: 'redis', REDIS_URL: redis!.url, REDIS_KEY_PREFIX: prefix },
    });
    const base = onRedis.base;
    const after = (await call(base, 'GET', '/.well-known/svc.json')).body.audit_log;
    expect(after.frozen).toEqual(discovery.frozen);
    const frozenAfter = await crawlLog(base, frozenKey, { prefix: '/log/v1', entries: false });
    expect(frozenAfter.bodies.map((b) => [b.path, Buffer.from(b.bytes).toString('base64')])).toEqual(
      frozenBefore.bodies.map((b) => [b.path, Buffer.from(b.bytes).toString('base64')]),
    );

    // The live log goes on from where it was: a new room's receipts, then every old checkpoint is
    // consistent with the first checkpoint published after the move.
    await roomWithReceipts(base, clock);
    await settle(onRedis);
    const verifierKey = after.verifier_key as string;
    const first = await verifyCheckpoint((await call(base, 'GET', '/log/checkpoint')).text, verifierKey);
    expect(first.size).toBe(6);
    for (const [size, note] of livePublished) {
      expect((await call(base, 'GET', `/log/checkpoint/${size}`)).text.startsWith(note), `checkpoint ${size}`).toBe(
        true,
      );
      if (size === 0) continue;
      const proof = await call(base, 'GET', `/log/proof/consistency?first=${size}&second=${first.size}`);
      expect(proof.status).toBe(200);
      const older = await verifyCheckpoint(note, verifierKey);
      expect(verifyConsistency(older, first, proof.body.consistency_proof), `checkpoint ${size}`).toBe(true);
    }
    const verified = await verify(base);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('checkpoint 6 is consistent with checkpoint 5');
  }, 180_000);
});
