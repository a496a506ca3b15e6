/**
 * Engagement across processes in Redis mode: this test process runs one service, and a second, real
 * node process (`src/main.ts`) runs another on the same Redis. They share nothing in memory, so every
 * wake below crosses the pub/sub fan-out, and every webhook attempt goes through the store's claim.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { openSse } from '../support/sse-client.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const redis = await startRedisServer();

describe.skipIf(redis === null)('engagement across two processes on one Redis', () => {
  let a: RunningService;
  let b: ChildService;
  let receiver: WebhookReceiver;
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `engagement-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    a = await startService({ env });
    b = await spawnService(env);
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await receiver?.close();
    await redis?.stop();
  });

  it('wakes a completion wait parked on one process from the deciding choice made on the other', async () => {
    const { slug, tokens } = await seatedRoom(a.base, {
      question: 'Across?',
      options: ['yes', 'no'],
      config: { early_close: true, settle_window: 0 },
    });
    await call(b.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'yes' } });
    let wokeAt = 0;
    const poll = call(a.base, 'GET', `/api/rooms/${slug}/next-action?for=completion&wait=30`, {
      token: tokens[0],
    }).then((r) => {
      wokeAt = performance.now();
      return r;
    });
    await eventually(() => a.service.engagement.waiters.parked === 1);
    const deciding = await call(b.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'yes' },
    });
    const committedBy = performance.now();
    expect(deciding.body.status).toBe('resolved');
    const woken = await poll;
    expect(woken.body).toMatchObject({
      status: 'actionable',
      decision: { seq: 1, status: 'resolved', resolved_winner: 'yes' },
    });
    expect(wokeAt - committedBy).toBeLessThan(500);
  });

  it('streams, on the other process, events committed here', async () => {
    // The stream subscribes before its headers reach the client, so it listens before the commit.
    const { slug, tokens } = await seatedRoom(a.base, { about: 'Streams across' });
    const stream = await openSse(`${b.base}/api/rooms/${slug}/events/stream`, { authorization: `Bearer ${tokens[1]}` });
    expect(stream.status).toBe(200);
    await call(a.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[0], body: { body: 'from A' } });
    const [frame] = await stream.waitFor(1);
    expect(JSON.parse(frame!.data!)).toMatchObject({ seq: 3, data: { body: 'from A' } });
    stream.close();
  });

  it('delivers each webhook event exactly once although both processes run the outbox', async () => {
    const { slug, tokens } = await seatedRoom(a.base, {
      about: 'Hooks across',
      config: { max_deliberation_messages_per_participant: 100 },
    });
    const registered = await call(b.base, 'POST', `/api/rooms/${slug}/webhooks`, {
      token: tokens[0],
      body: { url: receiver.url },
    });
    expect(registered.status).toBe(200);
    const posts = Array.from({ length: 20 }, (_, i) =>
      call(i % 2 === 0 ? a.base : b.base, 'POST', `/api/rooms/${slug}/discuss`, {
        token: tokens[i % 2],
        body: { body: `message ${i}` },
      }),
    );
    for (const posted of await Promise.all(posts)) expect(posted.status).toBe(200);
    // Extra runs on this process race the committing processes for the same attempts.
    await Promise.all([a.service.engagement.webhooks.runDue(), a.service.engagement.webhooks.runDue()]);
    // The verification delivery (seq 0, answered 200: the receiver's consent) and the 20 room events.
    const roomDeliveries = async () =>
      (await a.service.store.engagement.deliveries(slug, registered.body.webhook_id)).filter((d) => d.seq > 0);
    const settled = async () => {
      const deliveries = await roomDeliveries();
      return deliveries.length === 20 && deliveries.every((d) => d.status === 'delivered');
    };
    await eventually(settled, 10_000);
    // One claimed attempt each: no process could have sent any of them a second time.
    const deliveries = await roomDeliveries();
    expect(deliveries.map((d) => d.attempts)).toEqual(Array(20).fill(1));
    const ids = receiver.received
      .filter((r) => r.body.slug === slug && r.body.event.seq > 0)
      .map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(20);
    expect(receiver.received.filter((r) => r.body.slug === slug && r.body.event.seq === 0)).toHaveLength(1);
    expect(new Set(ids).size).toBe(20);
  });
});
