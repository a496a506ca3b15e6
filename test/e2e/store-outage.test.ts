/**
 * A store outage never crashes the process: with Redis frozen (SIGSTOP) while a decision's settle
 * deadline falls due, the deadline scheduler reports and retries instead of rejecting, readiness
 * answers 503 within a second, writes answer 503 envelopes with Retry-After, and everything
 * recovers by itself once Redis answers again — the decision seals with a verifiable receipt.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const redis = await startRedisServer();

describe.skipIf(redis === null)('a Redis outage while a deadline falls due', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    svc = await startService({
      clock,
      env: {
        STORE: 'redis',
        REDIS_URL: redis!.url,
        REDIS_KEY_PREFIX: `outage-${randomUUID().slice(0, 8)}:`,
        REDIS_COMMAND_TIMEOUT_MS: '1000',
        CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      },
    });
  });
  afterAll(async () => {
    redis?.resume();
    await svc?.stop();
    await redis?.stop();
    process.off('unhandledRejection', onUnhandled);
  });

  it('reports, answers 503 quickly where it can, and recovers without a restart', { timeout: 30_000 }, async () => {
    const room = await seatedRoom(svc.base, {
      question: 'Settle?',
      options: ['alpha', 'beta'],
      config: { voting_window: 600, early_close: true, settle_window: 3 },
    });
    for (const token of room.tokens) {
      const chose = await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, {
        token,
        body: { choice: 'alpha' },
      });
      expect(chose.status).toBe(200);
    }

    redis!.pause();
    clock.advance(4_000);
    // The settle deadline is due and the store hangs: the run reports and resolves, it never rejects.
    await expect(svc.service.scheduler.runDue()).resolves.toBeUndefined();

    const started = performance.now();
    const ready = await call(svc.base, 'GET', '/readyz');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'not_ready' });

    const write = await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
      token: room.tokens[1],
      body: { body: 'still there?' },
    });
    expect(write.status).toBe(503);
    expect(write.body.error.code).toBe('vendor:conclave:unavailable');
    expect(write.headers.get('retry-after')).toBe('1');

    redis!.resume();
    await eventually(async () => (await call(svc.base, 'GET', '/readyz')).status === 200, 10_000);
    clock.advance(60_000);
    await svc.service.scheduler.runDue();
    const outcome = await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] });
    expect(outcome.status).toBe(200);
    expect(outcome.body.decisions[0]).toMatchObject({ resolved_winner: 'alpha' });
    expect(verifyRoomReceiptChain(outcome.body)).toEqual({ ok: true, errors: [] });
    expect(unhandled).toEqual([]);
  });
});
