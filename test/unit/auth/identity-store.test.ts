/** One contract for the IdentityStore adapters: in memory, SQLite (beside the room store) and Redis. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type DeviceGrant,
  GRANT_RETENTION_MS,
  type HostedKey,
  type IdentityStore,
  MemoryIdentityStore,
} from '../../../src/auth/identity-store.js';
import { RedisIdentityStore } from '../../../src/auth/identity-store-redis.js';
import { openSqliteIdentityStore } from '../../../src/auth/identity-store-sqlite.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import { startRedisServer } from '../../support/redis-server.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

function grant(overrides: Partial<DeviceGrant> = {}): DeviceGrant {
  return {
    deviceCodeHash: randomUUID(),
    userCode: randomUUID().replace(/-/g, '').slice(0, 8).toUpperCase(),
    clientId: 'agent-cli',
    actions: ['choose', 'discuss'],
    resource: null,
    agentSlug: null,
    from: null,
    createdAt: T0,
    expiresAt: T0 + 600_000,
    intervalSeconds: 5,
    lastPolledAt: null,
    status: 'pending',
    publicId: null,
    ...overrides,
  };
}

function hostedKey(overrides: Partial<HostedKey> = {}): HostedKey {
  return {
    keyHash: randomUUID(),
    publicId: 'acct_abcdefghijklmnop',
    clientId: 'agent-cli',
    actions: ['choose'],
    createdAt: T0,
    expiresAt: T0 + 30 * 86_400_000,
    mandateJti: `urn:uuid:${randomUUID()}`,
    revokedAt: null,
    ...overrides,
  };
}

function identityContract(name: string, open: () => Promise<IdentityStore>) {
  describe(name, () => {
    it('stores grants, finds them by device code hash and user code, and keeps user codes unique', async () => {
      const store = await open();
      const g = grant({ resource: 'https://conclave.test', agentSlug: 'k7m3pq2dnx', from: 'build bot <ci@example>' });
      expect(await store.createDeviceGrant(g, T0)).toBe(true);
      expect(await store.deviceGrant(g.deviceCodeHash)).toEqual(g);
      expect(await store.deviceGrantByUserCode(g.userCode)).toEqual(g);
      expect(await store.createDeviceGrant(grant({ userCode: g.userCode }), T0)).toBe(false);
      expect(await store.deviceGrant('unknown')).toBeNull();
      expect(await store.deviceGrantByUserCode('ZZZZZZZZ')).toBeNull();
      await store.close();
    });

    it('records polls and decides a pending grant once', async () => {
      const store = await open();
      const g = grant();
      await store.createDeviceGrant(g, T0);
      await store.notePoll(g.deviceCodeHash, T0 + 5000, 10);
      expect(await store.deviceGrant(g.deviceCodeHash)).toMatchObject({ lastPolledAt: T0 + 5000, intervalSeconds: 10 });
      const approved = await store.decideDeviceGrant(g.deviceCodeHash, 'approved', 'acct_abcdefghijklmnop');
      expect(approved).toMatchObject({ status: 'approved', publicId: 'acct_abcdefghijklmnop' });
      expect(await store.decideDeviceGrant(g.deviceCodeHash, 'denied', null)).toBeNull();
      expect((await store.deviceGrant(g.deviceCodeHash))?.status).toBe('approved');

      const d = grant();
      await store.createDeviceGrant(d, T0);
      expect(await store.decideDeviceGrant(d.deviceCodeHash, 'denied', null)).toMatchObject({
        status: 'denied',
        publicId: null,
      });
      await store.close();
    });

    it('redeems an approved grant exactly once, storing its hosted key', async () => {
      const store = await open();
      const g = grant();
      await store.createDeviceGrant(g, T0);
      const key = hostedKey();
      expect(await store.redeemDeviceGrant(g.deviceCodeHash, key)).toBe(false);
      await store.decideDeviceGrant(g.deviceCodeHash, 'approved', key.publicId);
      expect(await store.redeemDeviceGrant(g.deviceCodeHash, key)).toBe(true);
      expect(await store.redeemDeviceGrant(g.deviceCodeHash, hostedKey())).toBe(false);
      expect((await store.deviceGrant(g.deviceCodeHash))?.status).toBe('redeemed');
      expect(await store.hostedKey(key.keyHash)).toEqual(key);
      expect(await store.hostedKey('unknown')).toBeNull();
      await store.close();
    });

    it('revokes a key once and lists the revocation in order', async () => {
      const store = await open();
      const keys = [hostedKey(), hostedKey()];
      for (const key of keys) {
        const g = grant();
        await store.createDeviceGrant(g, T0);
        await store.decideDeviceGrant(g.deviceCodeHash, 'approved', key.publicId);
        await store.redeemDeviceGrant(g.deviceCodeHash, key);
      }
      const before = (await store.revocations()).length;
      const entry = (key: HostedKey) => ({
        jti: key.mandateJti,
        revoked_at: '2026-05-01T11:00:00.000Z',
        reason: 'key revoked',
      });
      await store.revokeHostedKey(keys[1]!.keyHash, entry(keys[1]!), T0 + 1000);
      await store.revokeHostedKey(keys[1]!.keyHash, entry(keys[1]!), T0 + 2000);
      await store.revokeHostedKey(keys[0]!.keyHash, entry(keys[0]!), T0 + 3000);
      await store.revokeHostedKey('unknown', { jti: 'urn:uuid:nothing', revoked_at: 'x' }, T0);
      expect((await store.revocations()).slice(before)).toEqual([entry(keys[1]!), entry(keys[0]!)]);
      expect((await store.hostedKey(keys[1]!.keyHash))?.revokedAt).toBe(T0 + 1000);
      expect(await store.isRevoked(keys[0]!.mandateJti)).toBe(true);
      expect(await store.isRevoked('urn:uuid:nothing')).toBe(false);
      await store.close();
    });

    it('frees the user codes of long-expired grants', async () => {
      const store = await open();
      const old = grant();
      await store.createDeviceGrant(old, T0);
      const later = T0 + 600_000 + GRANT_RETENTION_MS + 1;
      expect(
        await store.createDeviceGrant(
          grant({ userCode: old.userCode, createdAt: later, expiresAt: later + 600_000 }),
          later,
        ),
      ).toBe(true);
      await store.close();
    });
  });
}

identityContract('MemoryIdentityStore', async () => new MemoryIdentityStore());

const dirs: string[] = [];
identityContract('SqliteIdentityStore', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'conclave-identity-'));
  dirs.push(dir);
  return openSqliteIdentityStore(path.join(dir, 'conclave.db'));
});

describe('SqliteIdentityStore beside the room store', () => {
  it('shares the database file without touching the room store or its migrations', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'conclave-identity-'));
    dirs.push(dir);
    const file = path.join(dir, 'conclave.db');
    const rooms = openSqliteStore({ file });
    const identity = openSqliteIdentityStore(file);
    const g = grant();
    await identity.createDeviceGrant(g, T0);
    await rooms.reserveSlug('k7m3pq2dnx');
    await rooms.close();
    await identity.close();
    const reopenedRooms = openSqliteStore({ file });
    const reopened = openSqliteIdentityStore(file);
    expect(await reopened.deviceGrant(g.deviceCodeHash)).toEqual(g);
    await reopenedRooms.ping();
    await reopened.close();
    await reopenedRooms.close();
  });
});

const server = await startRedisServer();
const connections: Redis[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  for (const redis of connections) redis.disconnect();
  await server?.stop();
});

describe.skipIf(server === null)('on Redis', () => {
  const connect = () => {
    const redis = new Redis(server!.url);
    connections.push(redis);
    return redis;
  };
  identityContract(
    'RedisIdentityStore',
    async () => new RedisIdentityStore(connect(), `test-${randomUUID().slice(0, 8)}:`),
  );

  it('keeps its keys under <prefix>identity: with expiries', async () => {
    const prefix = `test-${randomUUID().slice(0, 8)}:`;
    const store = new RedisIdentityStore(connect(), prefix);
    const g = grant();
    await store.createDeviceGrant(g, T0);
    const raw = connect();
    const keys = await raw.keys(`${prefix}*`);
    expect(keys.sort()).toEqual(
      [`grant:${g.deviceCodeHash}`, `user:${g.userCode}`].map((k) => `${prefix}identity:{identity}:${k}`).sort(),
    );
    for (const key of keys) expect(await raw.pttl(key)).toBeGreaterThan(0);
  });
});
