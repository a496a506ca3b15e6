/**
 * Guessing (docs/architecture.md, Guess throttling): wrong room passwords, unknown invites and
 * unknown tokens are counted per (room, client address), per client address and per room, and a
 * client that keeps guessing gets 429 `rate_limit.exceeded` with a Retry-After that grows. The
 * rightful user is never held for long: a room under attack takes no password for the rest of its
 * minute, and an address that guessed waits at most a minute after a short burst. On Redis the
 * counts are shared by every process. Client addresses are simulated with TRUST_PROXY and
 * X-Forwarded-For.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectModern } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'the right password';
const ADMIN_TOKEN = `admin-${'z'.repeat(40)}`;
const ATTACKERS = Array.from({ length: 8 }, (_, i) => `203.0.113.${i + 1}`);

type Response = Awaited<ReturnType<typeof call>>;
/** Each wrong password costs one scrypt (N = 2^15); a loaded machine needs more than the default. */
const SLOW = 90_000;

async function privateRoom(base: string, address: string): Promise<string> {
  const created = await call(base, 'POST', '/api/rooms', {
    body: { question: 'Which?', options: ['a', 'b'], visibility: 'private', password: PASSWORD },
    headers: { 'x-forwarded-for': address },
  });
  expect(created.status).toBe(200);
  return created.body.slug;
}

/** A wrong guess of one of the three kinds, from an address. */
function guess(base: string, slug: string, address: string, i: number): Promise<Response> {
  const headers = { 'x-forwarded-for': address };
  switch (i % 4) {
    case 0:
      return call(base, 'GET', `/api/rooms/${slug}`, { headers: { ...headers, 'x-room-password': `wrong ${i}` } });
    case 1:
      return call(base, 'POST', `/api/rooms/${slug}/join`, { body: { password: `wrong ${i}` }, headers });
    case 2:
      return call(base, 'POST', `/api/rooms/${slug}/join`, { body: { invite: `it_guess${i}` }, headers });
    default:
      return call(base, 'GET', `/api/rooms/${slug}`, { headers: { ...headers, 'x-room-password': `wrong ${i}` } });
  }
}

function expectThrottled(res: Response): number {
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe('rate_limit.exceeded');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(res.body.error.details.retry_after_seconds).toBe(retryAfter);
  // The refusal says nothing about whether the guess was right.
  expect(res.text).not.toContain(PASSWORD);
  return retryAfter;
}

function readWithPassword(base: string, slug: string, address: string): Promise<Response> {
  return call(base, 'GET', `/api/rooms/${slug}`, {
    headers: { 'x-forwarded-for': address, 'x-room-password': PASSWORD },
  });
}

describe('one service', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { TRUST_PROXY: 'true', CONCLAVE_ADMIN_TOKEN: ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(
    '40 concurrent wrong guesses from 8 addresses: 429 with Retry-After; the rightful user gets in within the minute',
    async () => {
      const slug = await privateRoom(svc.base, '192.0.2.1');
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => guess(svc.base, slug, ATTACKERS[i % 8]!, i)),
      );
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      for (const res of limited) expect(expectThrottled(res)).toBeLessThanOrEqual(60);
      for (const res of answers.filter((r) => r.status !== 429)) {
        expect(['auth.invalid_password', 'invite.invalid']).toContain(res.body.error.code);
      }

      // Once the room's minute is over, the right password works, from a clean address and from
      // one that guessed (a burst of five at most per address: it waits a minute, no more).
      clock.advance(61_000);
      expect((await readWithPassword(svc.base, slug, '192.0.2.77')).status).toBe(200);
      const join = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
        body: { password: PASSWORD, display_name: 'rightful' },
        headers: { 'x-forwarded-for': '192.0.2.78' },
      });
      expect(join.status).toBe(200);
      expect((await readWithPassword(svc.base, slug, ATTACKERS[0]!)).status).toBe(200);
    },
    SLOW,
  );

  it(
    'an address that keeps guessing waits longer and longer',
    async () => {
      const slug = await privateRoom(svc.base, '192.0.2.2');
      const attacker = '203.0.113.200';
      const waits: number[] = [];
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 5; i++) {
          const res = await guess(svc.base, slug, attacker, 0);
          if (res.status === 429) break;
          expect(res.body.error.code).toBe('auth.invalid_password');
        }
        waits.push(expectThrottled(await guess(svc.base, slug, attacker, 0)));
        clock.advance(61_000);
      }
      expect(waits[0]).toBeLessThanOrEqual(60);
      expect(waits.at(-1)!).toBeGreaterThan(600);
      // Another room is not held by this room's count (below the per-address ceiling).
      const other = await privateRoom(svc.base, '192.0.2.3');
      expect((await readWithPassword(svc.base, other, attacker)).status).toBe(200);
    },
    SLOW,
  );

  it('counts guesses over MCP like REST: a tool call gets the same 429 envelope', async () => {
    const slug = await privateRoom(svc.base, '192.0.2.6');
    // The MCP client connects from 127.0.0.1; REST guesses from the same address count together.
    for (let i = 0; i < 3; i++) {
      const res = await call(svc.base, 'GET', `/api/rooms/${slug}`, { headers: { 'x-room-password': `nope ${i}` } });
      expect(res.status).toBe(401);
    }
    const session = await connectModern(`${svc.base}/mcp`);
    try {
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await session.call('read_room', { slug, password: `mcp wrong ${i}` }));
      expect(outcomes.map((o) => o.body.error.code)).toEqual([
        'auth.invalid_password',
        'auth.invalid_password',
        'rate_limit.exceeded',
        'rate_limit.exceeded',
      ]);
      expect(outcomes[2]!.body.error.details.retry_after_seconds).toBeGreaterThanOrEqual(1);
    } finally {
      await session.close();
    }
    clock.advance(61_000);
  });

  it('unknown bearer tokens (admin-token guesses) are throttled per address too', async () => {
    const slug = await privateRoom(svc.base, '192.0.2.4');
    const attacker = '203.0.113.201';
    const answers: Response[] = [];
    for (let i = 0; i < 40; i++) {
      answers.push(
        await call(svc.base, 'GET', `/api/rooms/${slug}`, {
          token: `guessed-admin-token-${i}-${'x'.repeat(32)}`,
          headers: { 'x-forwarded-for': attacker },
        }),
      );
    }
    expect(answers.filter((r) => r.status === 401).length).toBeGreaterThan(0);
    expect(answers.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    clock.advance(11 * 60_000);
  });

  it('admin-token guesses on the device approval route are throttled', async () => {
    const attacker = '203.0.113.202';
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await call(svc.base, 'POST', '/oauth/device/approve', {
        token: `guessed-admin-token-${i}-${'y'.repeat(32)}`,
        body: { user_code: 'ABCD-EFGH', approve: true },
        headers: { 'x-forwarded-for': attacker },
      });
      statuses.push(res.status);
      if (res.status === 429) expectThrottled(res);
    }
    expect(statuses.filter((s) => s === 401).length).toBe(30);
    expect(statuses.filter((s) => s === 429).length).toBe(10);
    // The right admin token from another address is not held.
    const admin = await call(svc.base, 'POST', '/oauth/device/approve', {
      token: ADMIN_TOKEN,
      body: { user_code: 'ABCD-EFGH', approve: true },
      headers: { 'x-forwarded-for': '192.0.2.50' },
    });
    expect(admin.status).not.toBe(429);
    expect(admin.status).not.toBe(401);
    clock.advance(11 * 60_000);
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(redis === null)('two services on one Redis', () => {
  const clock = new ManualClock(Date.now());
  let a: RunningService;
  let b: RunningService;
  beforeAll(async () => {
    const env = {
      TRUST_PROXY: 'true',
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `guess-${randomUUID().slice(0, 8)}:`,
    };
    a = await startService({ clock, env });
    b = await startService({ clock, env });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it(
    'counts the guesses sent to either process',
    async () => {
      const slug = await privateRoom(a.base, '192.0.2.5');
      const answers: Response[] = [];
      for (let i = 0; i < 40; i++) answers.push(await guess(i % 2 === 0 ? a.base : b.base, slug, ATTACKERS[i % 8]!, i));
      const limited = answers.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      for (const res of limited) expectThrottled(res);
      // 20 wrong on the room, over both processes: the room takes no password for its minute.
      expect(answers.filter((r) => r.status !== 429)).toHaveLength(20);
      expectThrottled(await readWithPassword(b.base, slug, '192.0.2.99'));
      clock.advance(61_000);
      expect((await readWithPassword(b.base, slug, '192.0.2.99')).status).toBe(200);
      expect((await readWithPassword(a.base, slug, ATTACKERS[3]!)).status).toBe(200);
    },
    SLOW,
  );
});
