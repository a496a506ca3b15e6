/**
 * Request rate limits over real HTTP (01 §7): per client IP on every route, per credential on
 * mutating requests, 429 `rate_limit.exceeded` with Retry-After and details, applied after routing
 * but before room existence and body parsing (01 §9), shared across processes on Redis.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

type Response = Awaited<ReturnType<typeof call>>;

function expectLimited(res: Response, scope: 'ip' | 'credential', limit: number, retryAfter: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe(String(retryAfter));
  expect(res.body.error).toMatchObject({
    code: 'rate_limit.exceeded',
    details: { scope, limit, window_seconds: 60, retry_after_seconds: retryAfter },
    request_id: res.headers.get('x-correlation-id'),
  });
}

describe('per client IP', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { RATE_LIMIT_IP_PER_MIN: '5', RATE_LIMIT_CREDENTIAL_PER_MIN: '0' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('allows the limit per minute on any route, then answers 429 until the window frees a slot', async () => {
    const { base } = svc;
    expect((await call(base, 'GET', '/healthz')).status).toBe(200);
    clock.advance(10_000);
    for (let i = 0; i < 4; i++) expect((await call(base, 'GET', '/.well-known/svc.json')).status).toBe(200);
    clock.advance(5_000);

    const limited = await call(base, 'GET', '/healthz', { headers: { origin: 'https://agent.example' } });
    expectLimited(limited, 'ip', 5, 45);
    // Browser agents can read the answer and its Retry-After.
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect(limited.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);

    // Route and method come first (01 §9 step 1); then the limit, before room existence and body parsing.
    expect((await call(base, 'GET', '/no/such/route')).status).toBe(404);
    expectLimited(await call(base, 'GET', '/api/rooms/zzzzzzzzzz'), 'ip', 5, 45);
    expectLimited(
      await call(base, 'POST', '/api/rooms', { raw: '{"question":', headers: { 'content-type': 'application/json' } }),
      'ip',
      5,
      45,
    );
    expectLimited(await call(base, 'POST', '/oauth/token', { body: {} }), 'ip', 5, 45);

    // At 60 s the first request leaves the window; the next slot frees when the four at 10 s leave.
    clock.advance(45_000);
    expect((await call(base, 'GET', '/healthz')).status).toBe(200);
    expectLimited(await call(base, 'GET', '/healthz'), 'ip', 5, 10);
  });
});

describe('per credential', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_CREDENTIAL_PER_MIN: '3' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('counts mutating requests per bearer credential; reads and other credentials are not affected', async () => {
    const { base } = svc;
    const created = await call(base, 'POST', '/api/rooms', {
      body: { question: 'Where?', options: ['alpha', 'beta'], config: { visibility: 'public' } },
    });
    const { slug } = created.body;
    const ann = (await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'ann' } })).body
      .participant_token;
    const bob = (await call(base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'bob' } })).body
      .participant_token;

    for (const text of ['one', 'two']) {
      expect(
        (await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token: ann, body: { body: text } })).status,
      ).toBe(200);
    }
    // The state-changing GET counts too.
    expect((await call(base, 'GET', `/api/rooms/${slug}/choose?choice=alpha`, { token: ann })).status).toBe(200);
    clock.advance(1_000);
    expectLimited(
      await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token: ann, body: { body: 'three' } }),
      'credential',
      3,
      59,
    );
    expectLimited(
      await call(base, 'POST', `/api/rooms/zzzzzzzzzz/discuss`, { token: ann, body: {} }),
      'credential',
      3,
      59,
    );

    expect((await call(base, 'GET', `/api/rooms/${slug}`, { token: ann })).status).toBe(200);
    expect((await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token: bob, body: { body: 'hi' } })).status).toBe(
      200,
    );

    clock.advance(59_000);
    expect(
      (await call(base, 'POST', `/api/rooms/${slug}/discuss`, { token: ann, body: { body: 'again' } })).status,
    ).toBe(200);
  });

  it('keys a presented mandate by its jti, not by the bearer that accompanies it', async () => {
    const { base } = svc;
    const created = await call(base, 'POST', '/api/rooms', { body: { question: 'Which?', options: ['a', 'b'] } });
    const mandate = (jti: string) =>
      [{ alg: 'EdDSA', typ: 'svc-mandate+jwt', kid: 'k' }, { jti }]
        .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
        .join('.') + '.c2ln';
    const send = (jti: string) =>
      call(base, 'POST', `/api/rooms/${created.body.slug}/discuss`, {
        token: created.body.creator_token,
        headers: { 'x-mandate': mandate(jti) },
        body: { body: 'x' },
      });
    for (let i = 0; i < 3; i++) expect((await send('urn:uuid:one')).status).not.toBe(429);
    expectLimited(await send('urn:uuid:one'), 'credential', 3, 60);
    expect((await send('urn:uuid:two')).status).not.toBe(429);
    // The creator token on its own has its own budget.
    expect(
      (
        await call(base, 'POST', `/api/rooms/${created.body.slug}/discuss`, {
          token: created.body.creator_token,
          body: { body: 'y' },
        })
      ).status,
    ).not.toBe(429);
  });
});

describe('limits can be disabled', () => {
  it('lets any number of requests through with 0', async () => {
    const svc = await startService({ env: { RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_CREDENTIAL_PER_MIN: '0' } });
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, () => call(svc.base, 'GET', '/healthz')));
      expect(answers.every((res) => res.status === 200)).toBe(true);
    } finally {
      await svc.stop();
    }
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(redis === null)('on Redis', () => {
  it('holds the per-IP limit across two processes', async () => {
    const clock = new ManualClock(Date.now());
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `e2e-${randomUUID().slice(0, 8)}:`,
      RATE_LIMIT_IP_PER_MIN: '3',
    };
    const one = await startService({ clock, env });
    const two = await startService({ clock, env });
    try {
      expect((await call(one.base, 'GET', '/healthz')).status).toBe(200);
      expect((await call(two.base, 'GET', '/healthz')).status).toBe(200);
      expect((await call(one.base, 'GET', '/healthz')).status).toBe(200);
      expectLimited(await call(two.base, 'GET', '/healthz'), 'ip', 3, 60);
      expectLimited(await call(one.base, 'GET', '/healthz'), 'ip', 3, 60);
      clock.advance(60_000);
      expect((await call(two.base, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});

describe('per credential over MCP', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_CREDENTIAL_PER_MIN: '2' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('counts the token argument of mutating tool calls, not the HTTP request', async () => {
    const { base } = svc;
    const room = (await call(base, 'POST', '/api/rooms', { body: { about: 'mcp limits' } })).body;
    const discuss = (text: string) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: randomUUID(),
          method: 'tools/call',
          params: { name: 'discuss', arguments: { slug: room.slug, token: room.creator_token, body: text } },
        }),
      }).then(async (r) => {
        const text = await r.text();
        const data = text.startsWith('{')
          ? text
          : (text
              .split('\n')
              .find((l) => l.startsWith('data: '))
              ?.slice(6) ?? 'null');
        return JSON.parse(data).result;
      });
    expect((await discuss('one')).isError).toBeFalsy();
    expect((await discuss('two')).isError).toBeFalsy();
    const third = await discuss('three');
    expect(third.isError).toBe(true);
    expect(third.structuredContent.error).toMatchObject({
      code: 'rate_limit.exceeded',
      details: { scope: 'credential', limit: 2 },
    });
  });
});
