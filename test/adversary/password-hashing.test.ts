/**
 * Guessers cannot starve a rightful password join (docs/architecture.md, Guess throttling): 32
 * clients guess wrong passwords as fast as they are answered, with the guess limits opened wide so
 * only the hashing queue stands between them and the thread pool. The queue is full throughout (the
 * guessers are refused with 429), yet a client that has not been hashing is put at the head of the
 * line: every rightful join is served, never refused. (How long it waits is in `npm run bench`,
 * the password-storm rows; the bound is one running hash.)
 *
 * The embedded default behind one trusted hop: X-Forwarded-For carries each client's address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_CHECK_BOUNDS } from '../../src/auth/password-checks.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'the right password';
const GUESSERS = 32;
const RIGHTFUL_JOINS = 10;

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

describe('32 guessers hashing as fast as they can', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({
      env: {
        TRUST_PROXY: '127.0.0.1',
        // The worst case for the queue: no guess tier holds the guessers back.
        GUESS_LIMIT_PER_MIN: '1000000',
        RATE_LIMIT_IP_PER_MIN: '1000000',
        RATE_LIMIT_CREATE_PER_HOUR: '1000',
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
  });

  async function passwordRoom(address: string): Promise<string> {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which?', options: ['a', 'b'], password: PASSWORD },
      ...from(address),
    });
    expect(created.status).toBe(200);
    return created.body.slug;
  }

  it('every rightful join during the storm is served, while guessers are refused for want of a place', async () => {
    const guessRooms: string[] = [];
    for (let i = 0; i < GUESSERS; i++) guessRooms.push(await passwordRoom('192.0.2.1'));
    const rightfulRooms: string[] = [];
    for (let i = 0; i < RIGHTFUL_JOINS; i++) rightfulRooms.push(await passwordRoom('192.0.2.1'));

    let storming = true;
    const answers = { wrong: 0, busy: 0, other: 0 };
    const guesser = async (i: number) => {
      for (let n = 0; storming; n++) {
        const res = await call(svc.base, 'POST', `/api/rooms/${guessRooms[i]}/join`, {
          body: { password: `guess ${n}`, display_name: `g${i}` },
          ...from(`198.51.100.${10 + i}`),
        });
        if (res.body.error?.code === 'auth.invalid_password') answers.wrong++;
        else if (res.status === 429 && res.body.error?.details?.scope === 'guess') answers.busy++;
        else answers.other++;
      }
    };
    const storm = Array.from({ length: GUESSERS }, (_, i) => guesser(i));
    try {
      // Past the first wave: the guessers that found a place on their very first try (a client never
      // seen before is as quiet as anyone, the rightful one included) have all been hashed, so every
      // place in line is now held by a guesser refused or hashed before; and the line is full.
      while (
        answers.wrong < 2 * (PASSWORD_CHECK_BOUNDS.running + PASSWORD_CHECK_BOUNDS.waiting) ||
        answers.busy < 3 * GUESSERS
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
      const joins = [];
      for (const [i, slug] of rightfulRooms.entries()) {
        const busyBefore = answers.busy;
        const join = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
          body: { password: PASSWORD, display_name: `rightful ${i}` },
          ...from(`203.0.113.${i + 1}`),
        });
        joins.push({ status: join.status, code: join.body.error?.code, busyMeanwhile: answers.busy - busyBefore });
      }
      // Served every time, while the queue kept refusing guessers (it was full all along).
      expect(joins.map((j) => j.status)).toEqual(Array(RIGHTFUL_JOINS).fill(200));
      expect(joins.reduce((sum, j) => sum + j.busyMeanwhile, 0)).toBeGreaterThan(0);
    } finally {
      storming = false;
      await Promise.all(storm);
    }
    expect(answers.other).toBe(0);
    expect(answers.wrong).toBeGreaterThan(0);
  }, 180_000);
});
