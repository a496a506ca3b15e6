/**
 * Faults: the slot of a room's notice channel changes hands while another process waits on the room
 * (docs/architecture.md, Engagement: commit notices): its master is killed and its replica takes
 * over, or the slot is migrated to another master. Either way the waiting process's sharded
 * subscription is gone, so it must subscribe again on the new owner (and re-read the room once
 * confirmed): a commit made afterwards still wakes the wait.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { keysOf } from '../../src/store/redis-keys.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { redisCli, startRedisCluster, type TestRedisCluster } from '../support/redis-cluster.js';
import { call, type RunningService, startService } from '../support/service.js';

const cluster: TestRedisCluster | null = await startRedisCluster({ nodeTimeoutMs: 1000 });

describe.skipIf(cluster === null)('commit notices across a Cluster failover', () => {
  const services: RunningService[] = [];

  afterAll(async () => {
    for (const service of services) await service.stop();
    await cluster?.stop();
  });

  const envOf = (prefix: string) => ({
    STORE: 'redis',
    REDIS_URL: cluster?.url ?? '',
    REDIS_CLUSTER: 'true',
    REDIS_KEY_PREFIX: prefix,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
  });

  it('wakes a long-poll parked before its room’s master died, from a commit made after', async () => {
    const prefix = `failover-${randomUUID().slice(0, 8)}:`;
    const env = envOf(prefix);
    const a = await startService({ env });
    services.push(a);
    const b = await startService({ env });
    services.push(b);
    const { slug, tokens } = await seatedRoom(a.base, { about: 'Failover' }, 2);
    const channel = keysOf(prefix).roomCommits(slug);
    // B waits on the room; its subscription lands on the room's master.
    const first = call(b.base, 'GET', `/api/rooms/${slug}/next-action?for=activity&wait=60`, { token: tokens[0] });
    await eventually(() => b.service.engagement.notices?.rooms.isSubscribed(slug) === true);
    // ioredis re-sends the subscription to the new master on its own, but says nothing when it is
    // confirmed: the notices must subscribe again themselves, to re-read the room once confirmed.
    const rooms = b.service.engagement.notices!.rooms;
    let resubscribed = 0;
    const resubscribeAll = rooms.resubscribeAll.bind(rooms);
    rooms.resubscribeAll = () => {
      resubscribed++;
      resubscribeAll();
    };
    const victim = await cluster!.masterOf(channel);
    await cluster!.kill(victim);
    await eventually(async () => (await cluster!.masterOf(channel).catch(() => victim)) !== victim, 30_000);
    // B subscribes again on the promoted replica (ioredis rebuilt its sharded subscribers).
    await eventually(async () => {
      const port = await cluster!.masterOf(channel);
      const count = (await redisCli(port, 'PUBSUB', 'SHARDNUMSUB', channel)).trim().split('\n')[1];
      return Number(count) === 1 && b.service.engagement.notices?.rooms.isSubscribed(slug) === true;
    }, 30_000);
    // A writes once the cluster serves the slot again (a 503 while it moves is a normal answer).
    await eventually(async () => {
      const said = await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[1],
        body: { body: 'after the failover' },
      });
      return said.status === 200;
    }, 30_000);
    const woken = await first;
    expect(woken.body).toMatchObject({ status: 'activity' });
    expect(resubscribed).toBeGreaterThan(0);
  }, 120_000);

  it('wakes a long-poll parked before its room’s slot migrated to another master', async () => {
    const prefix = `migrate-${randomUUID().slice(0, 8)}:`;
    const env = envOf(prefix);
    const a = await startService({ env });
    services.push(a);
    const b = await startService({ env });
    services.push(b);
    const { slug, tokens } = await seatedRoom(a.base, { about: 'Migration' }, 2);
    const channel = keysOf(prefix).roomCommits(slug);
    const first = call(b.base, 'GET', `/api/rooms/${slug}/next-action?for=activity&wait=60`, { token: tokens[0] });
    await eventually(() => b.service.engagement.notices?.rooms.isSubscribed(slug) === true);
    const from = await cluster!.masterOf(channel);
    const masters = new Set<number>();
    for (const port of cluster!.ports) {
      const role = await redisCli(port, 'ROLE').catch(() => '');
      if (role.startsWith('master')) masters.add(port);
    }
    const to = [...masters].find((port) => port !== from)!;
    await migrateSlot(from, to, Number((await redisCli(from, 'CLUSTER', 'KEYSLOT', channel)).trim()), [...masters]);
    // Redis dropped B's subscription with the slot; B finds the new owner and subscribes there.
    await eventually(async () => {
      const count = (await redisCli(to, 'PUBSUB', 'SHARDNUMSUB', channel)).trim().split('\n')[1];
      return Number(count) === 1;
    }, 30_000);
    await eventually(async () => {
      const said = await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[1],
        body: { body: 'moved' },
      });
      return said.status === 200;
    }, 30_000);
    expect((await first).body).toMatchObject({ status: 'activity' });
  }, 120_000);
});

/** Moves one slot and its keys from one master to another, as `redis-cli --cluster reshard` does. */
async function migrateSlot(from: number, to: number, slot: number, masters: number[]): Promise<void> {
  const idOf = async (port: number) => (await redisCli(port, 'CLUSTER', 'MYID')).trim();
  const [fromId, toId] = [await idOf(from), await idOf(to)];
  await redisCli(to, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', fromId);
  await redisCli(from, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', toId);
  for (;;) {
    const keys = (await redisCli(from, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '100'))
      .trim()
      .split('\n')
      .filter(Boolean);
    if (keys.length === 0) break;
    await redisCli(from, 'MIGRATE', '127.0.0.1', String(to), '', '0', '5000', 'KEYS', ...keys);
  }
  for (const port of [to, from, ...masters.filter((p) => p !== from && p !== to)]) {
    await redisCli(port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
  }
}
