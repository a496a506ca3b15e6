/**
 * Redis bytes per room, live and concluded (compacted), over many rooms (docs/architecture.md,
 * Storage, "Compact rooms"). One typical room (10 members, 5 decided decisions, 45 messages,
 * closed) is built through the real service with compaction off; its keys are then copied at the
 * Redis level (DUMP/RESTORE) under new slugs until there are `rooms` of them, and every copy is
 * compacted by the store's own compaction. Bytes per room = the growth of `used_memory` (summed
 * over the masters of a Cluster) divided by the room count; MEMORY USAGE of one copy's keys is
 * reported beside it. Exported so a capacity bench can run it against a Cluster.
 */
import { Cluster, Redis } from 'ioredis';
import { openRedisStore } from '../src/store/redis-store.js';
import { startBenchService } from './bench-service.js';

export const TYPICAL_ROOM = { members: 10, decisions: 5, messages: 45 };

export interface RoomBytes {
  /** used_memory growth per room while the copies are expanded (live layout). */
  liveBytesPerRoom: number;
  /** used_memory growth per room once every copy is compacted. */
  concludedBytesPerRoom: number;
  /** MEMORY USAGE summed over one copy's keys, expanded and compacted. */
  liveUsage: number;
  concludedUsage: number;
  /** Milliseconds the compaction of all copies took, one after the other. */
  compactMs: number;
}

type Client = Redis | Cluster;

/**
 * used_memory summed over the masters, less what clients' and replicas' buffers and the replication
 * backlog hold at the moment: those follow the traffic of the copying and the compaction, not the data.
 */
async function usedMemory(client: Client): Promise<number> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  let total = 0;
  for (const node of nodes) {
    const info = await node.info('memory');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
    total +=
      field('used_memory') -
      field('mem_clients_slaves') -
      field('mem_clients_normal') -
      field('mem_replication_backlog');
  }
  return total;
}

async function usage(client: Client, keys: string[]): Promise<number> {
  let total = 0;
  for (const key of keys) total += Number((await client.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
  return total;
}

async function roomKeys(client: Client, prefix: string, slug: string): Promise<string[]> {
  const pattern = `${prefix}room:{${slug}}*`;
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const keys: string[] = [];
  for (const node of nodes) keys.push(...(await node.keys(pattern)));
  // The lock and its line are the room's only while someone writes it.
  return keys.filter((key) => !/:lock[ql]?$/.test(key));
}

/** Builds the typical room through the service's HTTP API and closes it; returns its slug. */
async function buildTypicalRoom(base: string): Promise<string> {
  const json = async (method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return (await response.json()) as Record<string, any>;
  };
  const created = await json('POST', '/api/rooms', undefined, {
    question: 'Benchmark?',
    options: ['alpha', 'beta'],
    config: { type: 'persistent', early_close: true, settle_window: 0 },
  });
  const slug = created.slug as string;
  const tokens: string[] = [created.creator_token];
  for (let i = 1; i < TYPICAL_ROOM.members; i++) {
    tokens.push(
      (await json('POST', `/api/rooms/${slug}/join`, undefined, { display_name: `member ${i}` })).participant_token,
    );
  }
  let said = 0;
  for (let d = 0; d < TYPICAL_ROOM.decisions; d++) {
    if (d > 0)
      await json('POST', `/api/rooms/${slug}/ask`, tokens[0], {
        question: `Decision ${d + 1}?`,
        options: ['alpha', 'beta'],
      });
    for (let i = 0; i < TYPICAL_ROOM.messages / TYPICAL_ROOM.decisions; i++, said++) {
      await json('POST', `/api/rooms/${slug}/discuss`, tokens[said % tokens.length], {
        body: `message number ${said}`,
      });
    }
    for (const token of tokens) await json('POST', `/api/rooms/${slug}/choose`, token, { choice: 'alpha' });
  }
  await json('POST', `/api/rooms/${slug}/close`, tokens[0], { statement: 'Done.' });
  return slug;
}

export async function measureRoomBytes(
  redisUrl: string,
  options: { cluster: boolean; rooms: number; keyPrefix?: string },
): Promise<RoomBytes> {
  const prefix = options.keyPrefix ?? `bench-${Date.now().toString(36)}:`;
  const { service } = await startBenchService({
    STORE: 'redis',
    REDIS_URL: redisUrl,
    REDIS_CLUSTER: options.cluster ? '1' : '0',
    REDIS_KEY_PREFIX: prefix,
    REDIS_COMPACT_AFTER_SECONDS: '0',
  });
  let template: string;
  try {
    template = await buildTypicalRoom(service.services.baseUrl);
  } finally {
    await service.close();
  }
  const nodes = redisUrl.split(',').map((u) => new URL(u.includes('://') ? u : `redis://${u}`));
  const client: Client = options.cluster
    ? new Cluster(nodes.map((u) => ({ host: u.hostname, port: Number(u.port) })))
    : new Redis(redisUrl);
  const store = await openRedisStore({ url: redisUrl, cluster: options.cluster, keyPrefix: prefix });
  try {
    const keys = await roomKeys(client, prefix, template);
    const dumps = await Promise.all(keys.map(async (key) => [key, await client.dumpBuffer(key)] as const));
    const slugs = Array.from({ length: options.rooms }, (_, i) => `c${i.toString(36).padStart(9, '0')}`);
    const copyKey = (key: string, slug: string) => key.replace(`{${template}}`, `{${slug}}`);
    const before = await usedMemory(client);
    for (let i = 0; i < slugs.length; i += 200) {
      await Promise.all(
        slugs
          .slice(i, i + 200)
          .flatMap((slug) => dumps.map(([key, dump]) => client.restore(copyKey(key, slug), 0, dump!, 'REPLACE'))),
      );
    }
    const live = await usedMemory(client);
    const liveUsage = await usage(client, await roomKeys(client, prefix, slugs[0]!));
    const started = performance.now();
    for (const slug of slugs) {
      const outcome = await store.compactRoom(slug, 0);
      if (outcome !== 'compacted') throw new Error(`room ${slug} did not compact: ${outcome}`);
    }
    const compactMs = performance.now() - started;
    const concluded = await usedMemory(client);
    const concludedUsage = await usage(client, await roomKeys(client, prefix, slugs[0]!));
    return {
      liveBytesPerRoom: (live - before) / options.rooms,
      concludedBytesPerRoom: (concluded - before) / options.rooms,
      liveUsage,
      concludedUsage,
      compactMs,
    };
  } finally {
    await store.close();
    client.disconnect();
  }
}
