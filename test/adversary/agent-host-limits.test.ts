/**
 * Limits by who is calling, over real HTTP and real MCP clients: one agent host (one address, many
 * agents, each with its own token) is not throttled as one client with the default limits, while
 * everything an attacker can present without holding a seat — nothing, a garbage bearer, a mandate
 * freshly self-issued by a new did:key — is still counted against its address; one mandate issuer
 * cannot dodge the per-credential budget by minting subjects; and on Redis the limits hold across
 * processes. The clock is a ManualClock that never moves within a test, so "within a minute" is exact.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { SigningKey } from '../../src/receipts/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { freshAgentKey, selfIssuedMandate } from '../support/mandates.js';
import { connectLegacy, connectModern, type McpSession, rpc } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

/** The shipped defaults, spelled out because the test harness turns the limiters off. */
const DEFAULT_LIMITS = {
  RATE_LIMIT_IP_PER_MIN: '600',
  RATE_LIMIT_CREDENTIAL_PER_MIN: '120',
  RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '600',
  RATE_LIMIT_ISSUER_PER_MIN: '12000',
  RATE_LIMIT_IP_AUTHENTICATED_PER_MIN: '30000',
  RATE_LIMIT_IP_MCP_SETUP_PER_MIN: '6000',
};
const AGENTS = 200;
const ROOMS = 10;
const IP_LIMIT = 600;

const key = freshAgentKey;
const mandate = (signer: SigningKey, sub?: string) => selfIssuedMandate(signer, sub === undefined ? {} : { sub });

function expectAddressLimited(res: { status: number; headers: Headers; body: any }) {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.body.error).toMatchObject({ code: 'rate_limit.exceeded', details: { scope: 'ip', limit: IP_LIMIT } });
}

async function publicRoom(base: string): Promise<{ slug: string; creator_token: string }> {
  const created = await call(base, 'POST', '/api/rooms', {
    body: { question: 'Which?', options: ['alpha', 'beta'], config: { visibility: 'public' } },
  });
  expect(created.status).toBe(200);
  return created.body;
}

async function inBatches<T>(count: number, size: number, run: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += size) {
    const batch = Array.from({ length: Math.min(size, count - start) }, (_, i) => run(start + i));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

it('spells out the shipped defaults', () => {
  const config = loadConfig({ DATA_DIR: '/nonexistent' });
  expect(config.rateLimits).toEqual({ ipPerMinute: 600, credentialPerMinute: 120, createPerHour: 30 });
  expect(config.callerLimits).toEqual({
    credentialCallsPerMinute: 600,
    issuerPerMinute: 12_000,
    authenticatedIpPerMinute: 30_000,
    mcpSetupPerMinute: 6_000,
  });
});

describe('an agent host with default limits', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { ...DEFAULT_LIMITS, MANDATE_ALLOW_SELF_ISSUED: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`runs ${AGENTS} MCP agents from one address, a handful of calls each, without one rate-limit error`, async () => {
    const rooms = await Promise.all(Array.from({ length: ROOMS }, () => publicRoom(svc.base)));
    const refused: unknown[] = [];
    const calls = await inBatches(AGENTS, 20, async (index) => {
      const session: McpSession = await (index % 2 === 0 ? connectModern : connectLegacy)(`${svc.base}/mcp`);
      try {
        const slug = rooms[index % ROOMS]!.slug;
        const track = async (name: string, args: Record<string, unknown>) => {
          const outcome = await session.call(name, args);
          if (outcome.isError) refused.push({ name, error: outcome.body.error });
          return outcome.body;
        };
        const joined = await track('join_room', { slug, display_name: `agent ${index}` });
        const token = joined.participant_token as string;
        await track('read_room', { slug, token });
        await track('wait', { slug, token, wait_seconds: 0 });
        await track('discuss', { slug, token, body: `hello from ${index}` });
        await track('read_room', { slug, token });
        await track('wait', { slug, token, wait_seconds: 0 });
        return 6;
      } finally {
        await session.close();
      }
    });
    expect(refused).toEqual([]);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(AGENTS * 6);
  }, 120_000);
});

describe('what is still counted against the address', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  let room: { slug: string; creator_token: string };
  beforeAll(async () => {
    svc = await startService({ clock, env: { ...DEFAULT_LIMITS, MANDATE_ALLOW_SELF_ISSUED: 'true' } });
  });
  afterAll(async () => {
    await svc.stop();
  });
  // Each case starts with a fresh window.
  const nextMinute = async () => {
    clock.advance(61_000);
    room = await publicRoom(svc.base);
  };

  it('stops an anonymous flood from one address, on REST and over MCP', async () => {
    await nextMinute();
    const answers = await inBatches(IP_LIMIT, 50, () => call(svc.base, 'GET', `/api/rooms/${room.slug}`));
    // The room's creation took one slot of the window.
    expect(answers.filter((a) => a.status === 429)).toHaveLength(1);
    expectAddressLimited(await call(svc.base, 'GET', `/api/rooms/${room.slug}`));
    expectAddressLimited(await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, { body: { display_name: 'x' } }));
    const mcp = await rpc(
      `${svc.base}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_room', arguments: { slug: room.slug } },
      }),
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(mcp.status).toBe(429);
    expect(mcp.json.error).toMatchObject({ code: 'rate_limit.exceeded', details: { scope: 'ip' } });
  });

  it('counts garbage bearers against the address, and a real seat keeps its own budget', async () => {
    await nextMinute();
    const seat = (await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, { body: { display_name: 'host' } })).body
      .participant_token as string;
    const garbage = () => `t_${randomBytes(32).toString('base64url')}`;
    const answers = await inBatches(IP_LIMIT, 50, () =>
      call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: garbage() }),
    );
    expect(answers.filter((a) => a.status === 401)).toHaveLength(IP_LIMIT - 2);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(2);
    expectAddressLimited(await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: garbage() }));
    expectAddressLimited(
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token: garbage(), body: { body: 'x' } }),
    );
    // The agent host's own seat, minted before the flood, is not locked out by it...
    expect((await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { token: seat })).status).toBe(200);
    // ...but cannot pay for new credentials: creates and joins are always paid by the address, or one
    // seat could mint tokens (each with a budget of its own) without the address ever paying.
    expectAddressLimited(
      await call(svc.base, 'POST', '/api/rooms', { token: seat, body: { question: 'More?', options: ['a', 'b'] } }),
    );
    expectAddressLimited(
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, { token: seat, body: { display_name: 'more' } }),
    );
    const mcpCreate = await rpc(
      `${svc.base}/mcp/host`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_room', arguments: { token: seat, question: 'More?', options: ['a', 'b'] } },
      }),
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(mcpCreate.status).toBe(429);
  });

  it('counts a fresh self-issued did:key mandate per call against the address', async () => {
    await nextMinute();
    const answers = await inBatches(IP_LIMIT, 50, () =>
      call(svc.base, 'GET', `/api/rooms/${room.slug}`, { headers: { 'x-mandate': mandate(key()) } }),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(IP_LIMIT - 1);
    expectAddressLimited(
      await call(svc.base, 'GET', `/api/rooms/${room.slug}`, { headers: { 'x-mandate': mandate(key()) } }),
    );
    // Joining with one still costs the address: a new subject never opens a budget of its own.
    expectAddressLimited(
      await call(svc.base, 'POST', `/api/rooms/${room.slug}/join`, {
        headers: { 'x-mandate': mandate(key()) },
        body: { display_name: 'fresh' },
      }),
    );
  });
});

describe('mandates that hold a seat', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({
      clock,
      env: {
        RATE_LIMIT_IP_PER_MIN: '20',
        RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '4',
        RATE_LIMIT_ISSUER_PER_MIN: '10',
        MANDATE_ALLOW_SELF_ISSUED: 'true',
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('are limited per (issuer, subject) across mandates, and per issuer across subjects', async () => {
    const { slug } = await publicRoom(svc.base);
    const issuer = key();
    const subjects = ['agent:one', 'agent:two', 'agent:three', 'agent:four'];
    for (const sub of subjects) {
      const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
        headers: { 'x-mandate': mandate(issuer, sub) },
        body: { display_name: sub.replace(':', ' ') },
      });
      expect(joined.status).toBe(200);
    }
    // A subject's seat is proven by its join; a second mandate for it proves itself on first use (by address).
    const first = mandate(issuer, 'agent:one');
    const read = (jws: string) => call(svc.base, 'GET', `/api/rooms/${slug}`, { headers: { 'x-mandate': jws } });
    expect((await read(first)).status).toBe(200);
    const second = mandate(issuer, 'agent:one');
    expect((await read(second)).status).toBe(200);
    // Both now count on agent:one's budget of 4: 4 calls, then 429 for either mandate.
    for (const jws of [first, second, first, second]) expect((await read(jws)).status).toBe(200);
    const limited = await read(first);
    expect(limited.status).toBe(429);
    expect(limited.body.error.details).toMatchObject({ scope: 'credential', limit: 4, bucket: 'credential_calls' });
    // The issuer's other subjects share its budget of 10, 4 of which agent:one has used (its refused call
    // counted nowhere).
    const others = subjects.slice(1).map((sub) => mandate(issuer, sub));
    for (const jws of others) expect((await read(jws)).status).toBe(200); // proven: by address
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push((await read(others[i % 3]!)).status);
    expect(answers).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const byIssuer = await read(others[0]!);
    expect(byIssuer.status).toBe(429);
    expect(byIssuer.body.error.details).toMatchObject({ scope: 'credential', limit: 10, bucket: 'issuer' });
    // Another issuer is untouched.
    const stranger = key();
    expect(
      (
        await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
          headers: { 'x-mandate': mandate(stranger) },
          body: { display_name: 'stranger' },
        })
      ).status,
    ).toBe(200);
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(redis === null)('on Redis, across two processes', () => {
  it('knows a token minted by one process on the other, and shares its budget and the address budget', async () => {
    const clock = new ManualClock(Date.now());
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `adv-${randomUUID().slice(0, 8)}:`,
      RATE_LIMIT_IP_PER_MIN: '6',
      RATE_LIMIT_CREDENTIAL_CALLS_PER_MIN: '5',
    };
    const one = await startService({ clock, env });
    const two = await startService({ clock, env });
    try {
      const { slug } = await publicRoom(one.base);
      const token = (await call(one.base, 'POST', `/api/rooms/${slug}/join`, { body: { display_name: 'ann' } })).body
        .participant_token as string;
      // Two address slots used. The token is known on process two at once.
      const reads = [];
      for (let i = 0; i < 5; i++)
        reads.push((await call(i % 2 ? one.base : two.base, 'GET', `/api/rooms/${slug}`, { token })).status);
      expect(reads).toEqual([200, 200, 200, 200, 200]);
      const limited = await call(two.base, 'GET', `/api/rooms/${slug}`, { token });
      expect(limited.status).toBe(429);
      expect(limited.body.error.details).toMatchObject({ scope: 'credential', limit: 5 });
      // Garbage bearers share the address budget across both processes: 4 slots left.
      const garbage = [];
      for (let i = 0; i < 5; i++) {
        const base = i % 2 ? one.base : two.base;
        garbage.push((await call(base, 'GET', `/api/rooms/${slug}`, { token: `t_${randomUUID()}` })).status);
      }
      expect(garbage).toEqual([401, 401, 401, 401, 429]);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
