/**
 * Brings engagement keys written before webhook consent up to date, once per keyspace (the Redis side
 * of what SQLite migration 8 does): deliveries settled back then (their time is `-`) enter the settled
 * index as settled now, so they are removed a retention later, and active subscriptions enter their
 * origin's index, so the service-wide per-origin limit counts them. Subscriptions themselves need no
 * change: one without `verified_at` is verified once, like a new one (docs/agents.md, Webhooks).
 *
 * SCAN walks each node's keyspace in steps, so Redis keeps serving meanwhile; a walk interrupted before
 * its marker is written is done again whole at the next start (every write is an add-if-absent).
 */
import type { Redis } from 'ioredis';
import type { EngagementRedis, RedisCalls } from './redis-engagement-commands.js';
import { dueMember, parseDelivery, parseWebhooks } from './redis-engagement-codec.js';
import { originOf } from './engagement-port.js';
import { escapeGlob, scanNodes } from './redis-maintenance.js';

export interface LegacyIndexKeys {
  marker: string;
  settled: string;
  origin: (origin: string) => string;
}

export async function indexLegacyEngagement(
  redis: EngagementRedis,
  keyPrefix: string,
  keys: LegacyIndexKeys,
  calls: RedisCalls,
  nowMs: number,
): Promise<void> {
  if ((await calls.call(() => redis.get(keys.marker))) !== null) return;
  const roomPrefix = `${keyPrefix}room:{`;
  const nodes = scanNodes(redis as unknown as Parameters<typeof scanNodes>[0]) as unknown as Pick<Redis, 'scan'>[];
  for (const node of nodes) {
    for (const suffix of [':deliveries', ':webhooks']) {
      let cursor = '0';
      do {
        const pattern = `${escapeGlob(keyPrefix)}room:*}${suffix}`;
        const [next, found] = await calls.call(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        for (const key of found) {
          const slug = key.slice(roomPrefix.length, -`}${suffix}`.length);
          const hash = await calls.call(() => redis.hgetall(key));
          if (suffix === ':deliveries') {
            const scored: (string | number)[] = [];
            for (const [field, value] of Object.entries(hash)) {
              const [webhookId, eventId] = field.split('|') as [string, string];
              const delivery = parseDelivery(slug, webhookId, eventId, value);
              if (delivery.status !== 'pending' && delivery.settled_at === null) {
                scored.push(nowMs, dueMember(slug, webhookId, eventId));
              }
            }
            if (scored.length > 0) await calls.call(() => redis.zadd(keys.settled, 'NX', ...scored));
          } else {
            for (const hook of parseWebhooks(hash)) {
              if (hook.disabled_at !== null) continue;
              await calls.call(() =>
                redis.zadd(keys.origin(originOf(hook.url)), 'NX', hook.created_at, `${slug}|${hook.id}`),
              );
            }
          }
        }
      } while (cursor !== '0');
    }
  }
  await calls.call(() => redis.set(keys.marker, new Date(nowMs).toISOString()));
}
