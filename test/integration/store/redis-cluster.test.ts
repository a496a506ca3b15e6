/**
 * The Redis store on a real Redis Cluster (3 masters + 3 replicas): the whole store contract, every
 * room commit acknowledged only after a replica has it (REDIS_WAIT_REPLICAS=1), and a room's keys in
 * one slot while different rooms spread over the masters.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { redisCli, startRedisCluster } from '../../support/redis-cluster.js';
import { storeContract } from './contract.js';
import { engagementContract } from './engagement-contract.js';

const cluster = await startRedisCluster();

afterAll(async () => {
  await cluster?.stop();
});

const newPrefix = () => `cluster-${randomUUID().slice(0, 8)}:`;

describe.skipIf(cluster === null)('RedisStore on a Redis Cluster, acknowledging after one replica', () => {
  const url = cluster?.url ?? '';
  const target = {
    async fresh() {
      const keyPrefix = newPrefix();
      return {
        open: (clock?: () => number) =>
          openRedisStore({ url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 2000, ...(clock ? { clock } : {}) }),
      };
    },
  };
  storeContract(target);
  engagementContract(target);

  it("spreads rooms over the masters, each room's keys in one slot", async () => {
    const keyPrefix = newPrefix();
    const store = await openRedisStore({ url, keyPrefix, waitReplicas: 1 });
    const masters = new Set<number>();
    for (let i = 0; i < 12; i++) {
      const slug = `spread${i}`;
      await store.commit({
        slug,
        expected_version: 0,
        snapshot: '{}',
        next_deadline: null,
        events: [],
        receipts: [],
      });
      masters.add(await cluster!.masterOf(`${keyPrefix}room:{${slug}}`));
    }
    expect(masters.size).toBe(3);
    await store.close();
  });

  it('commits rooms on every master in one event-loop turn, beside reads of other rooms', async () => {
    // Auto-pipelined, the commit script (no fixed key count) was grouped by the slot of its key count
    // and refused together with the commands it met there.
    const store = await openRedisStore({ url, keyPrefix: newPrefix() });
    try {
      const slugs = Array.from({ length: 30 }, (_, i) => `turn${i}`);
      const created = await Promise.allSettled([
        ...slugs.map((slug) =>
          store.commit({ slug, expected_version: 0, snapshot: '{}', next_deadline: null, events: [], receipts: [] }),
        ),
        ...slugs.map((slug) => store.events(`other-${slug}`, 0, 10)),
      ]);
      expect(created.filter((result) => result.status === 'rejected')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('refuses to acknowledge a write no replica confirmed', async () => {
    const store = await openRedisStore({ url, keyPrefix: newPrefix(), waitReplicas: 2, waitTimeoutMs: 200 });
    // Each master has one replica: WAIT 2 can never be met, so the commit must not report success.
    await expect(
      store.commit({
        slug: 'twice',
        expected_version: 0,
        snapshot: '{}',
        next_deadline: null,
        events: [],
        receipts: [],
      }),
    ).rejects.toThrow(/reached 1 of the 2 Redis replicas/);
    await store.close();
    expect(await redisCli(cluster!.ports[0]!, 'CLUSTER', 'INFO')).toContain('cluster_state:ok');
  });
});
