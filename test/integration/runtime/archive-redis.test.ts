/**
 * Two processes on one Redis: one decides, the other reads. A process whose cached room fell behind
 * reads only what was archived since (the archive is append-only) and still sees every decision.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../../src/client/verify.js';
import { roomSignedFor } from '../../support/signed-room.js';
import { StoreUnavailableError } from '../../../src/store/port.js';
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

describe('a commit that fails after the batch archived a decision', () => {
  it('forgets what that batch archived, so the decision as another process sealed it is what is served', async () => {
    const created = await call(writer.base, 'POST', '/api/rooms', {
      body: { question: 'Lost?', options: ['a', 'b'], config: { early_close: true, settle_window: 0 } },
    });
    const { slug, creator_token: owner } = created.body;
    const joined = await call(writer.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'other' } });
    const other = joined.body.participant_token;
    await call(writer.base, 'POST', `/api/rooms/${slug}/choose`, { token: owner, body: { choice: 'a' } });

    // The writer seals the decision, but its commit never lands (as when a Redis master dies with it).
    const store = writer.service.store;
    const commit = store.commit.bind(store);
    store.commit = async () => {
      throw new StoreUnavailableError('the write was lost with its master');
    };
    const lost = await call(writer.base, 'POST', `/api/rooms/${slug}/choose`, { token: other, body: { choice: 'a' } });
    store.commit = commit;
    expect(lost.status).toBe(503);

    // The other process seals it for real; the writer then serves the room as stored.
    const sealed = await call(reader.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: other,
      body: { choice: 'a' },
    });
    expect(sealed.body.status).toBe('resolved');
    const outcome = (await call(writer.base, 'GET', `/api/rooms/${slug}/outcome`, { token: owner })).body;
    const jwks = (await call(writer.base, 'GET', '/.well-known/jwks.json')).body;
    const report = await verifyRoomReceiptChain(outcome, { jwks, room: roomSignedFor(outcome) });
    expect(report.errors).toEqual([]);
    expect(outcome.decisions[0].receipt_hash).toBe(
      (await call(reader.base, 'GET', `/api/rooms/${slug}/outcome`, { token: owner })).body.decisions[0].receipt_hash,
    );
  });
});
