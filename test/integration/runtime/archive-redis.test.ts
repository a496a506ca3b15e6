/**
 * Two processes on one Redis: one decides, the other reads. A process whose cached room fell behind
 * reads only what was archived since (the archive is append-only) and still sees every decision.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type TestRedisServer } from '../../support/redis-server.js';
import { call, type RunningService, startService } from '../../support/service.js';

let redis: TestRedisServer | null = null;
let writer: RunningService;
let reader: RunningService;

beforeAll(async () => {
  redis = await startRedisServer();
  if (!redis) throw new Error('redis-server is required for this test');
  const env = { STORE: 'redis', REDIS_URL: redis.url, CONCLAVE_SIGNING_KEY_SEED: 'ab'.repeat(32) };
  writer = await startService({ env });
  reader = await startService({ env });
});
afterAll(async () => {
  await writer?.stop();
  await reader?.stop();
  await redis?.stop();
});

describe('archived decisions across processes', () => {
  it('shows every decision to a process whose cached room fell behind', async () => {
    const created = await call(writer.base, 'POST', '/api/rooms', {
      body: {
        question: 'First?',
        options: ['a', 'b'],
        config: { type: 'persistent', early_close: true, settle_window: 0 },
      },
    });
    const { slug, creator_token: token } = created.body;
    const decide = async (question: string | null, choice: string) => {
      if (question)
        await call(writer.base, 'POST', `/api/rooms/${slug}/ask`, { token, body: { question, options: ['a', 'b'] } });
      const chosen = await call(writer.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice } });
      expect(chosen.body.status).toBe('resolved');
    };
    const winners = async () => {
      const outcome = await call(reader.base, 'GET', `/api/rooms/${slug}/outcome`, { token });
      return outcome.body.decisions.map((d: any) => [d.seq, d.resolved_winner]);
    };
    await decide(null, 'a');
    expect(await winners()).toEqual([[1, 'a']]);
    await decide('Second?', 'b');
    await decide('Third?', 'a');
    expect(await winners()).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'a'],
    ]);
    const full = await call(reader.base, 'GET', `/api/rooms/${slug}?include=full`, { token });
    expect(full.status).toBe(200);
  });
});
