/**
 * A client is its address group (docs/architecture.md, Robustness at the edges): an IPv4 address,
 * or an IPv6 /64, since one IPv6 client is handed a whole /64 and can write a fresh address into
 * every request. Every per-address key counts the group: the request limit, room creation, every
 * guess tier and the address an idempotent credential is bound to. The room's guess ceiling holds a
 * room under attack for every guesser, and password checks (scrypt) are bounded, so guessing
 * cannot take the thread pool from everyone else.
 *
 * The embedded default behind one trusted hop: TRUST_PROXY names 127.0.0.1, where this test sends
 * from, and X-Forwarded-For carries the client address the proxy saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { rpc } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

const PASSWORD = 'the right password';
const READS_PER_MINUTE = 100;
const MCP_SETUP_PER_MINUTE = 20;

type Response = Awaited<ReturnType<typeof call>>;

/** A fresh address in the /64 `prefix` for every call: what an IPv6 client can do at no cost. */
function addressesIn(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}:${(++n).toString(16)}:${(n * 7).toString(16)}:${(n * 13).toString(16)}:1`;
}

const from = (address: string, headers: Record<string, string> = {}) => ({
  headers: { 'x-forwarded-for': address, ...headers },
});

async function privateRoom(base: string, address: string): Promise<string> {
  const created = await call(base, 'POST', '/api/rooms', {
    body: { question: 'Which?', options: ['a', 'b'], password: PASSWORD },
    ...from(address),
  });
  expect(created.status).toBe(200);
  return created.body.slug;
}

function expectHeld(res: Response, scope: string): void {
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe('rate_limit.exceeded');
  expect(res.body.error.details.scope).toBe(scope);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('a client is its address group (IPv6 /64), on the embedded default behind one trusted hop', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({
      clock,
      env: {
        TRUST_PROXY: '127.0.0.1',
        RATE_LIMIT_IP_PER_MIN: String(READS_PER_MINUTE),
        RATE_LIMIT_CREATE_PER_HOUR: '30',
        GUESS_LIMIT_PER_MIN: '5',
        RATE_LIMIT_IP_MCP_SETUP_PER_MIN: String(MCP_SETUP_PER_MINUTE),
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('wrong passwords from one /64, a fresh address each: 429 after five', async () => {
    const slug = await privateRoom(svc.base, '192.0.2.10');
    const next = addressesIn('2001:db8:a1:1');
    const answers: Response[] = [];
    for (let i = 0; i < 7; i++) {
      answers.push(await call(svc.base, 'GET', `/api/rooms/${slug}`, from(next(), { 'x-room-password': `no ${i}` })));
    }
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expectHeld(answers[5]!, 'guess');
    // The right password from another /64 gets in: the count was the guesser's.
    const read = await call(
      svc.base,
      'GET',
      `/api/rooms/${slug}`,
      from('2001:db8:a1:2::1', { 'x-room-password': PASSWORD }),
    );
    expect(read.status).toBe(200);
  }, 60_000);

  it('room creations from one /64, a fresh address each: 30, then 429', async () => {
    const next = addressesIn('2001:db8:a2:1');
    const statuses: number[] = [];
    let refusal: Response | null = null;
    for (let i = 0; i < 32; i++) {
      const res = await call(svc.base, 'POST', '/api/rooms', {
        body: { question: `Which ${i}?`, options: ['a', 'b'] },
        ...from(next()),
      });
      statuses.push(res.status);
      if (res.status === 429) refusal ??= res;
    }
    expect(statuses).toEqual([...Array(30).fill(200), 429, 429]);
    expectHeld(refusal!, 'ip');
    expect(refusal!.body.error.details).toMatchObject({ limit: 30, window_seconds: 3600 });
  });

  it(`anonymous reads from one /64, a fresh address each: ${READS_PER_MINUTE}, then 429`, async () => {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Read me?', options: ['a', 'b'], config: { visibility: 'public' } },
      ...from('192.0.2.13'),
    });
    const room = `/api/rooms/${created.body.slug}`;
    const next = addressesIn('2001:db8:a3:1');
    const statuses: number[] = [];
    for (let i = 0; i < READS_PER_MINUTE + 2; i++) {
      statuses.push((await call(svc.base, 'GET', room, from(next()))).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(READS_PER_MINUTE);
    expect(statuses.slice(READS_PER_MINUTE)).toEqual([429, 429]);
    // Another /64 is another client.
    expect((await call(svc.base, 'GET', room, from('2001:db8:a3:2::1'))).status).toBe(200);
  });

  it(`MCP setup messages from one /64, a fresh address each: ${MCP_SETUP_PER_MINUTE}, then 429`, async () => {
    const next = addressesIn('2001:db8:a4:1');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const statuses: number[] = [];
    let refusal: any = null;
    for (let i = 0; i < MCP_SETUP_PER_MINUTE + 2; i++) {
      const res = await rpc(`${svc.base}/mcp`, list, {
        'mcp-protocol-version': '2025-11-25',
        'x-forwarded-for': next(),
      });
      statuses.push(res.status);
      if (res.status === 429) refusal ??= res;
    }
    expect(statuses.filter((s) => s !== 429)).toHaveLength(MCP_SETUP_PER_MINUTE);
    expect(statuses.slice(MCP_SETUP_PER_MINUTE)).toEqual([429, 429]);
    expect(refusal.json.error).toMatchObject({ code: 'rate_limit.exceeded', details: { scope: 'ip' } });
  });

  it('100 IPv4 addresses guessing one room once each are held by the room ceiling', async () => {
    const slug = await privateRoom(svc.base, '192.0.2.11');
    const statuses: number[] = [];
    for (let a = 1; a <= 100; a++) {
      const res = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
        body: { password: `guess ${a}`, display_name: `g${a}` },
        ...from(`198.51.100.${a}`),
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(80).fill(429));
    // The room takes no password for its minute, from anyone; then the rightful user gets in.
    const early = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      body: { password: PASSWORD, display_name: 'rightful' },
      ...from('192.0.2.12'),
    });
    expectHeld(early, 'guess');
    clock.advance(61_000);
    const join = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
      body: { password: PASSWORD, display_name: 'rightful' },
      ...from('192.0.2.12'),
    });
    expect(join.status).toBe(200);
  }, 120_000);

  it('32 concurrent guessers on 32 rooms: checks past the bound are refused at once, the rightful join is served', async () => {
    const rooms: string[] = [];
    for (let i = 0; i < 33; i++) rooms.push(await privateRoom(svc.base, `192.0.2.${100 + i}`));
    const burst = await Promise.all(
      rooms.slice(0, 32).map((slug, i) =>
        call(svc.base, 'POST', `/api/rooms/${slug}/join`, {
          body: { password: `guess ${i}`, display_name: `g${i}` },
          ...from(`198.51.100.${150 + i}`),
        }),
      ),
    );
    const busy = burst.filter((r) => r.status === 429);
    // Two hashes run and two wait (auth/password-checks.ts): 32 at once cannot all be hashed.
    expect(busy.length).toBeGreaterThan(0);
    for (const res of busy) {
      expectHeld(res, 'guess');
      expect(res.body.error.message).toContain('Too many room passwords are being checked');
    }
    for (const res of burst.filter((r) => r.status !== 429)) expect(res.body.error.code).toBe('auth.invalid_password');
    const join = await call(svc.base, 'POST', `/api/rooms/${rooms[32]}/join`, {
      body: { password: PASSWORD, display_name: 'rightful' },
      ...from('192.0.2.99'),
    });
    expect(join.status).toBe(200);
  }, 120_000);

  it('an idempotent creation replays its creator token within the /64 it was made from, never outside it', async () => {
    const key = { 'idempotency-key': 'address-group-replay-1' };
    const body = { question: 'Replayed?', options: ['a', 'b'] };
    const first = await call(svc.base, 'POST', '/api/rooms', { body, ...from('2001:db8:a5:1::1', key) });
    expect(first.status).toBe(200);
    // The same client on its next privacy address.
    const again = await call(svc.base, 'POST', '/api/rooms', { body, ...from('2001:db8:a5:1:ffff::2', key) });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.creator_token).toBe(first.body.creator_token);
    // Another /64 with the same key is a different scope: it never sees the first client's token.
    const elsewhere = await call(svc.base, 'POST', '/api/rooms', { body, ...from('2001:db8:a5:2::1', key) });
    expect(elsewhere.body.creator_token).not.toBe(first.body.creator_token);
  });
});
