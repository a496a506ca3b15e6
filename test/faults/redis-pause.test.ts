/**
 * Fault: Redis frozen (SIGSTOP) while every one of three service processes has a decision whose
 * settle deadline falls due during the freeze. No process may exit; readiness answers 503 within a
 * second; writes answer 503 envelopes with Retry-After; once Redis answers again everything recovers
 * by itself and each decision seals with a verifiable receipt. These are real processes on a real
 * Redis, so time is wall time here.
 *   Short (npm test): 2 rounds of 3 s.  Full: FAULT_ROUNDS=5 FAULT_PAUSE_MS=10000 npx vitest run test/faults
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../src/receipts/index.js';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { startRedisServer } from '../support/redis-server.js';
import { call } from '../support/service.js';

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 2);
const PAUSE_MS = Number(process.env.FAULT_PAUSE_MS ?? 3000);
const SETTLE_SECONDS = 1;
const redis = await startRedisServer();

describe.skipIf(redis === null)('three processes through a Redis freeze', () => {
  const processes: ChildService[] = [];
  beforeAll(async () => {
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `pause-${randomUUID().slice(0, 8)}:`,
      REDIS_COMMAND_TIMEOUT_MS: '1000',
      CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
      // The default rate limits stay on: their counters live in the frozen Redis too.
      RATE_LIMIT_IP_PER_MIN: '600',
      RATE_LIMIT_CREDENTIAL_PER_MIN: '120',
    };
    processes.push(...(await Promise.all([0, 1, 2].map(() => spawnService(env, { capture: true })))));
  });
  afterAll(async () => {
    redis?.resume();
    await Promise.all(processes.map((p) => p.stop()));
    await redis?.stop();
  });

  it(`survives ${ROUNDS} freezes of ${PAUSE_MS} ms, answering 503 quickly and recovering by itself`, {
    timeout: 30_000 + ROUNDS * (PAUSE_MS + 20_000),
  }, async () => {
    const figures: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const readyMs: number[] = [];
      const writeMs: number[] = [];
      const rooms = await Promise.all(
        processes.map(async (p) => {
          const room = await seatedRoom(p.base, {
            question: `Round ${round}?`,
            options: ['alpha', 'beta'],
            config: { voting_window: 3600, early_close: true, settle_window: SETTLE_SECONDS },
          });
          let settling: unknown;
          for (const token of room.tokens) {
            const chose = await call(p.base, 'POST', `/api/rooms/${room.slug}/choose`, {
              token,
              body: { choice: 'alpha' },
            });
            settling = chose.body.settling;
          }
          expect(settling, `round ${round}`).toMatchObject({ presumptive: 'alpha' });
          return room;
        }),
      );

      redis!.pause();
      const frozenAt = Date.now();
      for (const p of processes) {
        const started = performance.now();
        const ready = await call(p.base, 'GET', '/readyz');
        readyMs.push(Math.round(performance.now() - started));
        expect(readyMs.at(-1), `round ${round}: /readyz time`).toBeLessThan(1000);
        expect(ready.status).toBe(503);
      }
      for (const [i, p] of processes.entries()) {
        const writeStarted = performance.now();
        const write = await call(p.base, 'POST', `/api/rooms/${rooms[i]!.slug}/discuss`, {
          token: rooms[i]!.tokens[1],
          body: { body: 'anyone there?' },
        });
        writeMs.push(Math.round(performance.now() - writeStarted));
        expect(write.status, `round ${round}: write during the freeze`).toBe(503);
        expect(write.body.error.code).toBe('vendor:conclave:unavailable');
        expect(write.headers.get('retry-after')).toBe('1');
      }
      // The settle deadlines fall due while Redis is frozen; the schedulers must report, not exit.
      await sleep(Math.max(0, PAUSE_MS - (Date.now() - frozenAt)));
      redis!.resume();
      const resumedAt = performance.now();

      for (const p of processes) expect(p.child.exitCode, `round ${round}: a process exited`).toBeNull();
      for (const [i, p] of processes.entries()) {
        const room = rooms[i]!;
        await eventually(async () => (await call(p.base, 'GET', '/readyz')).status === 200, 10_000);
        if (i === processes.length - 1) {
          figures.push(
            `round ${round}: /readyz 503 in ${readyMs.join('/')} ms, write 503 in ${writeMs.join('/')} ms, all ready ${Math.round(performance.now() - resumedAt)} ms after resume`,
          );
        }
        const wrote = await call(p.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
          token: room.tokens[1],
          body: { body: 'back' },
        });
        expect(wrote.status).toBe(200);
        const outcome = await call(p.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.tokens[0] });
        expect(outcome.body.decisions[0]).toMatchObject({ resolved_winner: 'alpha' });
        expect(verifyRoomReceiptChain(outcome.body)).toEqual({ ok: true, errors: [] });
      }
    }
    console.log(`Redis freezes of ${PAUSE_MS} ms, three processes:\n${figures.join('\n')}`);
  });
});
