/**
 * Engagement keys in the format written before webhook consent (the Redis scripts of commit 6aaa413:
 * a webhook's JSON record with `<id>:cursor`, `<id>:streak` and `<id>:disabled_at` beside it, and
 * deliveries as `"<status> <attempts> <next or -> <seq>"`) read correctly, and the store's one-time
 * upgrade indexes them: old settled deliveries are removed a retention after it, old active
 * subscriptions count towards their origin's limit.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../../src/store/redis-store.js';
import { startRedisServer } from '../../support/redis-server.js';
import { event } from './contract.js';

const server = await startRedisServer();
const T = 1_800_000_000_000;
const DAY = 86_400_000;

afterAll(async () => {
  await server?.stop();
});

describe.skipIf(server === null)('Redis engagement keys written before consent', () => {
  it('reads them, and indexes their settled deliveries and active subscriptions once', async () => {
    const url = server!.url;
    const keyPrefix = `pre-consent-${randomUUID().slice(0, 8)}:`;
    const store = await openRedisStore({ url, keyPrefix });
    const raw = new Redis(url);
    try {
      const slug = 'legacyroom';
      await store.commit({
        slug,
        expected_version: 0,
        snapshot: '{}',
        events: [event(1), event(2), event(3)],
        receipts: [],
        next_deadline: null,
      });
      const [e1, e2, e3] = await store.events(slug, 0, 10);
      const active = randomUUID();
      const removed = randomUUID();
      const exhausted = randomUUID();
      const record = (id: string, url: string) =>
        JSON.stringify({
          id,
          slug,
          owner: 'participant:p1',
          url,
          event_types: [],
          secret: 'whsec_secret',
          created_at: T,
          idempotency: null,
        });
      // Exactly as the earlier scripts wrote them.
      const room = `${keyPrefix}room:{${slug}}`;
      await raw.sadd(`${keyPrefix}webhook-rooms`, slug);
      await raw.hset(`${room}:webhooks`, {
        [active]: record(active, 'https://hooks.example.com/a'),
        [`${active}:cursor`]: '3',
        [`${active}:streak`]: '0',
        [removed]: record(removed, 'https://hooks.example.com/b'),
        [`${removed}:cursor`]: '3',
        [`${removed}:streak`]: '0',
        [`${removed}:disabled_at`]: String(T + 5),
        [exhausted]: record(exhausted, 'https://hooks.example.com/c'),
        [`${exhausted}:cursor`]: '3',
        [`${exhausted}:streak`]: '3',
        [`${exhausted}:disabled_at`]: String(T + 6),
      });
      await raw.hset(`${room}:deliveries`, {
        [`${active}|${e1!.id}`]: 'delivered 1 - 1',
        [`${active}|${e2!.id}`]: 'dropped 0 - 2',
        [`${active}|${e3!.id}`]: `pending 1 ${T + 5000} 3`,
      });
      await raw.zadd(`${keyPrefix}deliveries:due`, T + 5000, `${slug}|${active}|${e3!.id}`);

      const hooks = new Map((await store.engagement.webhooks(slug)).map((w) => [w.id, w]));
      expect(hooks.get(active)).toMatchObject({
        cursor: 3,
        verified_at: null,
        disabled_at: null,
        disabled_reason: null,
        refusal_streak: 0,
      });
      expect(hooks.get(removed)).toMatchObject({ disabled_at: T + 5, disabled_reason: 'unregistered' });
      expect(hooks.get(exhausted)).toMatchObject({ disabled_at: T + 6, disabled_reason: 'exhausted' });
      expect((await store.engagement.deliveries(slug, active)).map((d) => [d.status, d.settled_at])).toEqual([
        ['delivered', null],
        ['dropped', null],
        ['pending', null],
      ]);

      // Before the upgrade nothing finds them; after it, the settled ones go a retention later.
      expect(await store.engagement.pruneSettledDeliveries(T + 10 * DAY, 100)).toBe(0);
      expect(await store.engagement.originFull('https://hooks.example.com', 1)).toBe(false);
      await store.engagement.upgrade(T + DAY);
      expect(await store.engagement.originFull('https://hooks.example.com', 1)).toBe(true);
      expect(await store.engagement.originFull('https://hooks.example.com', 2)).toBe(false);
      expect(await store.engagement.pruneSettledDeliveries(T + DAY, 100)).toBe(0);
      expect(await store.engagement.pruneSettledDeliveries(T + DAY + 1, 100)).toBe(2);
      expect((await store.engagement.deliveries(slug, active)).map((d) => d.seq)).toEqual([3]);

      // Once: a second upgrade finds its marker and indexes nothing (a row settled the old way now
      // would stay unindexed; none is written any more).
      await raw.hset(`${room}:deliveries`, `${active}|x`, 'delivered 1 - 9');
      await store.engagement.upgrade(T + 2 * DAY);
      expect(await store.engagement.pruneSettledDeliveries(T + 30 * DAY, 100)).toBe(0);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });
});
