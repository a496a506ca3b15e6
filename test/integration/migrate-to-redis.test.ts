/**
 * `conclave migrate --to redis` on 100 rooms written by the SQLite store before the command existed
 * (test/fixtures/many-rooms): the API answers the same for every room over a service on the SQLite
 * directory and one on the Redis (compared field by field), every receipt chain verifies, a second
 * run changes nothing in Redis, and a room changed in Redis since is reported and not overwritten
 * (a source that has a log of its own by then is refused whole: Redis holds another log).
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostedKey } from '../../src/auth/identity-store.js';
import { RedisIdentityStore } from '../../src/auth/identity-store-redis.js';
import { openSqliteIdentityStore } from '../../src/auth/identity-store-sqlite.js';
import { verifyRoomReceiptChain } from '../../src/client/index.js';
import { roomSignedFor } from '../support/signed-room.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { migrateToRedis } from '../../src/store/migrate-to-redis.js';
import { openSqliteStore } from '../../src/store/sqlite-store.js';
import { repoRoot, runCli } from '../cli/run-cli.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { withoutLogTiming } from '../support/tlog.js';

const FIXTURE = path.join(repoRoot, 'test/fixtures/many-rooms');
const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

interface FixtureRoom {
  slug: string;
  token: string;
  mechanism: string;
  deleted: boolean;
}

/**
 * Every key's type, value and whether it expires: equal digests mean Redis holds the same data. (Not
 * DUMP: a hash's serialized field order changes as Redis rehashes it, with the same content.)
 */
async function digest(url: string): Promise<Map<string, string>> {
  const client = new Redis(url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    const entries = await Promise.all(keys.map(async (key) => [key, await keyContent(client, key)] as const));
    return new Map(entries);
  } finally {
    client.disconnect();
  }
}

async function keyContent(client: Redis, key: string): Promise<string> {
  const type = await client.type(key);
  const expires = (await client.pttl(key)) >= 0;
  const sorted = (items: string[]) => [...items].sort();
  const value =
    type === 'string'
      ? (await client.getBuffer(key))?.toString('base64')
      : type === 'hash'
        ? sorted(Object.entries(await client.hgetallBuffer(key)).map(([f, v]) => `${f}=${v.toString('base64')}`))
        : type === 'list'
          ? (await client.lrangeBuffer(key, 0, -1)).map((v) => v.toString('base64'))
          : type === 'set'
            ? sorted(await client.smembers(key))
            : type === 'zset'
              ? (await client.zrangebyscoreBuffer(key, '-inf', '+inf', 'WITHSCORES')).map((v) => v.toString('base64'))
              : null;
  return JSON.stringify({ type, expires, value });
}

describe.skipIf(redis === null)('conclave migrate --to redis', () => {
  let dir: string;
  let dataDir: string;
  let fixture: { now: number; mandate: string; rooms: FixtureRoom[] };
  let env: NodeJS.ProcessEnv;
  const services: RunningService[] = [];
  const migrate = () =>
    runCli(env, '--json', 'migrate', '--to', 'redis', '--redis-url', redis!.url, '--data-dir', dataDir);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-migrate-'));
    dataDir = path.join(dir, 'data');
    await cp(path.join(FIXTURE, 'store'), dataDir, { recursive: true });
    fixture = JSON.parse(await readFile(path.join(FIXTURE, 'tokens.json'), 'utf8'));
    env = { ...process.env, LOG_LEVEL: 'silent', CONCLAVE_CONFIG: path.join(dir, 'cli.json') };
  });
  afterAll(async () => {
    for (const svc of services) await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('copies every room; a second run changes nothing', async () => {
    const first = await migrate();
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      rooms: { created: 90, unchanged: 0, conflict: 0, reserved: 10 },
      conflicts: [],
      webhooks: 20,
    });
    const before = await digest(redis!.url);
    const second = await migrate();
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).rooms).toEqual({ created: 0, unchanged: 90, conflict: 0, reserved: 10 });
    const after = await digest(redis!.url);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [key, value] of before) expect(after.get(key), key).toBe(value);
  }, 60_000);

  it('answers the same for every room over SQLite and over Redis, and every chain verifies', async () => {
    const start = (env: Record<string, string>) =>
      startService({ clock: new ManualClock(fixture.now), dataDir, env }).then((svc) => {
        // Both answer under one public URL, as the same service would after the move.
        svc.service.services.baseUrl = 'http://conclave.example';
        services.push(svc);
        return svc;
      });
    const sqlite = await start({});
    const onRedis = await start({ STORE: 'redis', REDIS_URL: redis!.url });
    const jwks = (await call(onRedis.base, 'GET', '/.well-known/jwks.json')).body;
    expect(jwks).toEqual((await call(sqlite.base, 'GET', '/.well-known/jwks.json')).body);

    const mechanisms = new Set<string>();
    let receipts = 0;
    for (const room of fixture.rooms) {
      const reads = [
        `/api/rooms/${room.slug}/webhooks`,
        `/api/rooms/${room.slug}?include=full`,
        `/api/rooms/${room.slug}/outcome`,
        `/api/rooms/${room.slug}/events?limit=500`,
        `/api/rooms/${room.slug}/decisions`,
        `/api/rooms/${room.slug}/invites`,
      ];
      for (const url of reads) {
        const [here, there] = await Promise.all([
          call(sqlite.base, 'GET', url, { token: room.token }),
          call(onRedis.base, 'GET', url, { token: room.token }),
        ]);
        expect(there.status, url).toBe(here.status);
        expect(withoutRequestIds(there.body), url).toEqual(withoutRequestIds(here.body));
        if (room.deleted) expect(here.status, url).toBe(404);
        else expect(here.status, url).toBe(200);
      }
      const asAgent = await Promise.all(
        [sqlite, onRedis].map((svc) =>
          call(svc.base, 'GET', `/api/rooms/${room.slug}`, { headers: { 'x-mandate': fixture.mandate } }),
        ),
      );
      expect(withoutRequestIds(asAgent[1]!.body)).toEqual(withoutRequestIds(asAgent[0]!.body));
      if (room.deleted) continue;
      mechanisms.add(room.mechanism);
      const outcome = (await call(onRedis.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
      const report = await verifyRoomReceiptChain(outcome, { jwks, room: roomSignedFor(outcome) });
      expect(report.ok, `${room.slug}: ${report.errors.join('; ')}`).toBe(true);
      receipts += report.receipts.length;
    }
    expect(mechanisms.size).toBe(8);
    expect(receipts).toBe(103);
  }, 60_000);

  it('reports a room changed in Redis since, and leaves it as it is', async () => {
    const onRedis = services[1]!;
    const room = fixture.rooms.find((r) => !r.deleted)!;
    const posted = await call(onRedis.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: room.token,
      body: { body: 'written after the move' },
    });
    expect(posted.status).toBe(200);
    // The SQLite service above gave this directory a transparency log of its own, and the Redis
    // service logged the rooms in Redis: two logs, so the whole run is refused, nothing written
    // (refused already for the lease while the Redis service still holds it).
    const refused = await migrate();
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/already holds another transparency log|transparency log's lease/);
    // The fixture as it was (from before the log): the room changed in Redis is reported.
    const pristine = path.join(dir, 'pristine');
    await cp(path.join(FIXTURE, 'store'), pristine, { recursive: true });
    const again = await runCli(
      env,
      '--json',
      'migrate',
      '--to',
      'redis',
      '--redis-url',
      redis!.url,
      '--data-dir',
      pristine,
    );
    expect(again.code).toBe(6);
    const report = JSON.parse(again.stdout);
    expect(report.conflicts.map((c: { slug: string }) => c.slug)).toEqual([room.slug]);
    expect(report.rooms).toMatchObject({ created: 0, conflict: 1, unchanged: 89 });
    const events = await call(onRedis.base, 'GET', `/api/rooms/${room.slug}/events?limit=500`, { token: room.token });
    expect(JSON.stringify(events.body)).toContain('written after the move');
  }, 60_000);
});

describe.skipIf(redis === null)('conclave migrate --to redis: interrupted and resumed', () => {
  it('finishes what an interrupted run left, copying nothing twice', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'conclave-migrate-resume-'));
    try {
      await cp(path.join(FIXTURE, 'store'), dir, { recursive: true });
      const redisOptions = { url: redis!.url, keyPrefix: 'resume:' };
      let seen = 0;
      const interrupted = migrateToRedis({
        dataDir: dir,
        redis: redisOptions,
        onRoom: () => {
          if (++seen === 40) throw new Error('interrupted');
        },
      });
      await expect(interrupted).rejects.toThrow('interrupted');
      const resumed = await migrateToRedis({ dataDir: dir, redis: redisOptions });
      expect(resumed.conflicts).toEqual([]);
      // The first 40 slugs (in slug order) were done before the interruption; the rest are new.
      const rooms: FixtureRoom[] = JSON.parse(await readFile(path.join(FIXTURE, 'tokens.json'), 'utf8')).rooms;
      const later = rooms.sort((a, b) => (a.slug < b.slug ? -1 : 1)).slice(40);
      expect(resumed.rooms).toEqual({
        created: later.filter((r) => !r.deleted).length,
        unchanged: 90 - later.filter((r) => !r.deleted).length,
        conflict: 0,
        reserved: 10,
      });
      const again = await migrateToRedis({ dataDir: dir, redis: redisOptions });
      expect(again.rooms).toEqual({ created: 0, unchanged: 90, conflict: 0, reserved: 10 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(redis === null)('conclave migrate --to redis: identity data', () => {
  it('copies hosted keys and revocations once, in order', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'conclave-migrate-identity-'));
    try {
      const file = path.join(dir, 'conclave.db');
      await (await openSqliteStore({ file })).close();
      const sqlite = openSqliteIdentityStore(file);
      const now = Date.parse('2026-11-01T10:00:00.000Z');
      const keys: HostedKey[] = [0, 1].map((i) => ({
        keyHash: `${i}`.repeat(64),
        publicId: `acct_${i}`,
        clientId: 'cli',
        actions: ['choose'],
        createdAt: now,
        expiresAt: now + 30 * 86_400_000,
        mandateJti: `urn:uuid:00000000-0000-4000-8000-00000000000${i}`,
        revokedAt: null,
      }));
      for (const [i, key] of keys.entries()) {
        const grant = {
          deviceCodeHash: `${i}`.repeat(64),
          userCode: `ABCDEFG${i}`,
          clientId: 'cli',
          actions: ['choose'],
          resource: null,
          agentSlug: null,
          from: null,
          createdAt: now,
          expiresAt: now + 600_000,
          intervalSeconds: 5,
          lastPolledAt: null,
          status: 'pending' as const,
          publicId: null,
        };
        expect(await sqlite.createDeviceGrant(grant, now)).toBe(true);
        await sqlite.decideDeviceGrant(grant.deviceCodeHash, 'approved', key.publicId);
        expect(await sqlite.redeemDeviceGrant(grant.deviceCodeHash, key)).toBe(true);
      }
      await sqlite.revokeHostedKey(
        keys[1]!.keyHash,
        { jti: keys[1]!.mandateJti, revoked_at: '2026-11-02T00:00:00.000Z', reason: 'lost' },
        now + 1,
      );
      const expectedRevocations = await sqlite.revocations();
      const expectedKeys = await Promise.all(keys.map((k) => sqlite.hostedKey(k.keyHash)));
      await sqlite.close();

      const keyPrefix = 'identity-test:';
      const run = () => migrateToRedis({ dataDir: dir, redis: { url: redis!.url, keyPrefix }, now: () => now + 2 });
      expect((await run()).identity).toEqual({ hostedKeys: 2, revocations: 1 });
      expect((await run()).identity).toEqual({ hostedKeys: 0, revocations: 0 });
      const client = new Redis(redis!.url);
      try {
        const onRedis = new RedisIdentityStore(client, keyPrefix);
        expect(await onRedis.revocations()).toEqual(expectedRevocations);
        expect(await onRedis.isRevoked(keys[1]!.mandateJti)).toBe(true);
        for (const [i, key] of keys.entries()) expect(await onRedis.hostedKey(key.keyHash)).toEqual(expectedKeys[i]);
      } finally {
        client.disconnect();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Error envelopes carry a request id of their own per answer. */
/**
 * A body without what belongs to one deployment rather than to the room: request ids, and each
 * receipt's place in that deployment's transparency log (the Redis deployment logs the migrated
 * receipts afresh, in its own log, at its own indexes).
 */
function withoutRequestIds(body: unknown): unknown {
  return withoutLogTiming(body, ['request_id']);
}
