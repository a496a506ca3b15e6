/**
 * Upgrading a store whose log was written before leaves became commitments (fixture
 * test/fixtures/pre-commitment-log, written at commit 6aaa413): the old log becomes the frozen v1
 * log, byte for byte, served read-only under /log/v1/ with its entry bundles withheld; the live
 * log (origin <host>/log/v2) is back-filled with every receipt in the frozen log's leaf order, then
 * the receipt still queued. On SQLite (the fixture itself) and on Redis (the fixture's rooms and
 * log loaded as the code before this change stored them).
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint, verifyInclusion } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { parseReceiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { crawlLog } from '../support/log-crawl.js';
import { withFixtureDb } from '../support/fixture-db.js';
import { copyFixtureRoomToRedis } from '../support/fixture-to-redis.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, startService } from '../support/service.js';

const FIXTURE = path.resolve('test/fixtures/pre-commitment-log');
const SLUGS = ['a4czkz5tqe', 'w2vfhz2d6d', 'svqjwmptwk'];
const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

/** The fixture's log tables as the code before this change wrote them. */
function fixtureLog() {
  return withFixtureDb(path.join(FIXTURE, 'conclave.db'), (db) => {
    const entries = db.prepare('SELECT idx, jws, receipt_hash FROM tlog_entries ORDER BY idx').all() as {
      idx: number;
      jws: string;
      receipt_hash: string;
    }[];
    const checkpoints = db.prepare('SELECT size, note FROM tlog_checkpoints ORDER BY size').all() as {
      size: number;
      note: string;
    }[];
    const tiles = db.prepare('SELECT level, idx, hashes FROM tlog_tiles').all() as {
      level: number;
      idx: number;
      hashes: Buffer;
    }[];
    const rooms = db.prepare('SELECT slug, logged FROM tlog_rooms').all() as { slug: string; logged: number }[];
    const queue = db.prepare('SELECT slug, sequence, jws, receipt_hash FROM tlog_queue ORDER BY id').all() as {
      slug: string;
      sequence: number;
      jws: string;
      receipt_hash: string;
    }[];
    const state = db.prepare('SELECT size, published FROM tlog_state').get() as { size: number; published: number };
    return { entries, checkpoints, tiles, rooms, queue, state };
  });
}

/** Loads the fixture's log into Redis in the layout the code before this change used (`tlog:{~log}:*`). */
async function writeOldRedisLog(url: string, prefix: string): Promise<void> {
  const old = fixtureLog();
  const raw = new Redis(url);
  const base = `${prefix}tlog:{~log}`;
  // The rooms' commits queued their receipts; the old integrator had logged all but the last.
  await raw.del(`${base}:queue`);
  await raw.hset(`${base}:state`, 'size', old.state.size, 'published', old.state.published);
  await raw.rpush(`${base}:entries`, ...old.entries.map((e) => e.jws));
  for (const e of old.entries) await raw.hset(`${base}:index`, e.receipt_hash, e.idx);
  for (const r of old.rooms) await raw.hset(`${base}:rooms`, r.slug, r.logged);
  for (const c of old.checkpoints) {
    await raw.hset(`${base}:checkpoints`, String(c.size), c.note);
    await raw.zadd(`${base}:sizes`, c.size, String(c.size));
  }
  for (const t of old.tiles) await raw.setrange(`${base}:tiles:${t.level}`, t.idx * 256 * 32, t.hashes);
  await raw.rpush(`${base}:queue`, ...old.queue.map((q) => JSON.stringify(q)));
  await raw.quit();
}

const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex');

describe('a log written before leaves became commitments', () => {
  it.each(['sqlite', 'redis'])(
    'becomes the frozen v1 log; the live log holds every receipt in order (%s)',
    async (store) => {
      const old = fixtureLog();
      expect(old.state).toEqual({ size: 4, published: 4 });
      expect(old.queue.length).toBe(1);
      const dir = await mkdtemp(path.join(tmpdir(), 'conclave-tlog-upgrade-'));
      await cp(FIXTURE, dir, { recursive: true });
      let env: Record<string, string> = {};
      if (store === 'redis') {
        if (!redis) throw new Error('redis-server is required for this test');
        const prefix = `upgrade-${Date.now()}:`;
        for (const slug of SLUGS) await copyFixtureRoomToRedis(FIXTURE, slug, redis.url);
        const raw = new Redis(redis.url);
        for (const key of await raw.keys('conclave:*')) await raw.rename(key, key.replace('conclave:', prefix));
        await raw.quit();
        await writeOldRedisLog(redis.url, prefix);
        env = { STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
      }
      const svc = await startService({ dataDir: dir, env, clock: new ManualClock(Date.parse('2026-11-20T10:00:00Z')) });
      try {
        await svc.service.integrator.integrateNow();
        const discovery = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log;

        // The frozen log: listed, its checkpoints byte for byte as they were, every tile and proof checked.
        const oldOrigin = old.checkpoints[0]?.note.split('\n')[0] as string;
        expect(discovery.frozen).toEqual([
          { origin: oldOrigin, verifier_key: expect.any(String), size: 4, log_url: `${svc.base}/log/v1/` },
        ]);
        const frozenKey = discovery.frozen[0].verifier_key as string;
        const frozen = await crawlLog(svc.base, frozenKey, { prefix: '/log/v1', entries: false });
        expect([...frozen.checkpoints.entries()]).toEqual(old.checkpoints.map((c) => [c.size, c.note]));
        // Its entries are withheld, saying why.
        const bundle = await call(svc.base, 'GET', '/log/v1/tile/entries/000.p/4');
        expect(bundle.status).toBe(410);
        expect(bundle.body.error.code).toBe('vendor:conclave:not_found');
        expect(bundle.body.error.message).toMatch(/withheld/);
        // A member still proves its own receipt's inclusion in the frozen tree.
        const ownJws = (await svc.service.store.receipts(SLUGS[0] as string))[0]?.jws as string;
        const frozenIndex = old.entries.findIndex((e) => e.jws === ownJws);
        expect(frozenIndex).toBeGreaterThanOrEqual(0);
        const proof = (await call(svc.base, 'GET', `/log/v1/proof/inclusion?index=${frozenIndex}&size=4`)).body;
        const frozenTop = await verifyCheckpoint(proof.checkpoint as string, frozenKey);
        expect(verifyInclusion(ownJws, frozenIndex, proof.inclusion_proof as string[], frozenTop)).toBe(true);

        // The live log: a new origin, the frozen log's receipts in its order, then the queued one.
        expect(discovery.origin).toBe(`${svc.base.replace('http://', '')}/log/v2`);
        const live = await crawlLog(svc.base, discovery.verifier_key as string);
        expect(live.latest.size).toBe(5);
        const committed = [...old.entries.map((e) => e.jws), ...old.queue.map((q) => q.jws)];
        expect(
          live.leaves.map((leaf) => Buffer.from(parseReceiptLeaf(leaf)?.commitment ?? []).toString('hex')),
        ).toEqual(committed.map(sha256hex));
        // Nothing of the rooms in the live log's bytes (the frozen log's were whole receipts).
        for (const body of live.bodies) expect(Buffer.from(body.bytes).toString('latin1')).not.toContain('eyJ');
        if (store === 'sqlite') {
          // Every receipt's /outcome field is the live log's, with its position. (On Redis the
          // fixture's rooms are loaded without their archived decisions, so only the log is read.)
          const member = (
            await call(svc.base, 'GET', `/api/rooms/${SLUGS[0]}/outcome`, {
              token: 't_A-m7kLelfp0SCMYLR-GWgdwYgPlEw2Y73nPPtAfDeCM',
            })
          ).body;
          expect(member.decisions[0].receipt_jws).toBe(ownJws);
          const row = member.decisions[0].transparency_log;
          expect(row.index).toBe(frozenIndex);
          expect(row.checkpoint.split('\n')[0]).toBe(discovery.origin);
          expect(row.position.key_id).toBe(discovery.position_keys[0].key_id);

          // The frozen tables are exactly as the code before wrote them.
          await svc.stop({ keepData: true });
          const db = new Database(path.join(dir, 'conclave.db'), { readonly: true });
          expect(db.prepare('SELECT idx, jws, receipt_hash FROM tlog_entries ORDER BY idx').all()).toEqual(old.entries);
          expect(db.prepare('SELECT size, note FROM tlog_checkpoints ORDER BY size').all()).toEqual(old.checkpoints);
          expect(db.prepare('SELECT size, published FROM tlog_state').get()).toEqual(old.state);
          expect(db.prepare('SELECT count(*) AS n FROM tlog_queue').get()).toEqual({ n: 0 });
          db.close();
        }
      } finally {
        await svc.stop().catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
