/**
 * A stalled Redis must not lift the request limits. The attack: make Redis slow (load it, or stall
 * the host) and every request whose limiter cannot answer within 100 ms went through unlimited.
 * Here Redis is frozen (SIGSTOP) under a service with a limit of 5 requests a minute per address:
 * before, all 12 requests were served; now the process's own count decides after 50 ms and the
 * sixth request gets 429 with Retry-After. With Redis answering again, the shared count decides.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const redis = await startRedisServer();

describe.skipIf(redis === null)('the Redis rate limiter while Redis is frozen', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({
      env: {
        STORE: 'redis',
        REDIS_URL: redis!.url,
        REDIS_KEY_PREFIX: `limits-${randomUUID().slice(0, 8)}:`,
        REDIS_COMMAND_TIMEOUT_MS: '1000',
        CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
        RATE_LIMIT_IP_PER_MIN: '5',
      },
    });
  });
  afterAll(async () => {
    redis?.resume();
    await svc?.stop();
    await redis?.stop();
  });

  it('still limits each address, from the process’s own count', async () => {
    redis!.pause();
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof call>> | null = null;
    try {
      for (let i = 0; i < 12; i++) {
        // The API description is served without the store, so only the limiter touches Redis.
        const answer = await call(svc.base, 'GET', '/v1/openapi.json');
        statuses.push(answer.status);
        if (answer.status === 429) refused ??= answer;
      }
    } finally {
      redis!.resume();
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual(Array(7).fill(429));
    expect(refused!.body.error.code).toBe('rate_limit.exceeded');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
