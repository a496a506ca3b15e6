/**
 * Attack: one client fills the shared waiting capacity. MAX_PARKED_CONNECTIONS is one pool for
 * long-polls, MCP waits and SSE streams; an attacker address holding 110 % of it (many seats, so no
 * single credential stands out) must not keep another client's long-poll or stream from being served.
 * Addresses are real: the attacker connects from 127.0.0.1, the others bind 127.0.0.2 and 127.0.0.3.
 */
import { type ClientRequest, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, seatedRoom } from '../support/engagement.js';
import { connectModern } from '../support/mcp-clients.js';
import { type RunningService, startService } from '../support/service.js';

const POOL = 50;
const ATTACK = Math.ceil(POOL * 1.1);

interface Held {
  /** Resolves with the status once the response head arrives (a parked long-poll: at its timeout). */
  status: Promise<number>;
  body: Promise<string>;
  abort(): void;
}

/** One GET from a chosen loopback source address, on its own connection. */
function get(base: string, path: string, from: string, token?: string): Held {
  let req: ClientRequest | null = null;
  let resolveBody: (text: string) => void = () => {};
  const body = new Promise<string>((resolve) => {
    resolveBody = resolve;
  });
  const status = new Promise<number>((resolve, reject) => {
    req = request(
      `${base}${path}`,
      {
        localAddress: from,
        agent: false,
        headers: {
          accept: path.includes('/events/stream') ? 'text/event-stream' : 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          // A stream's first bytes are enough; JSON answers end on their own.
          if (path.includes('/events/stream') && response.statusCode === 200) resolveBody(text);
        });
        response.on('end', () => resolveBody(text));
        response.on('error', () => resolveBody(text));
      },
    );
    req.on('error', (error) => {
      reject(error);
      resolveBody('');
    });
    req.end();
  });
  status.catch(() => {});
  return { status, body, abort: () => req?.destroy() };
}

describe('parked connections: fair shares of the pool', () => {
  let svc: RunningService;
  const held: Held[] = [];
  beforeAll(async () => {
    svc = await startService({ env: { MAX_PARKED_CONNECTIONS: String(POOL) } });
  });
  afterAll(async () => {
    for (const h of held) h.abort();
    await svc.stop();
  });

  const parked = () => svc.service.engagement.waiters.parked + svc.service.engagement.streams.size;

  it('an address holding 110 % of MAX_PARKED_CONNECTIONS in long-polls and streams leaves others served', async () => {
    const attacker = await seatedRoom(svc.base, { about: 'The attacker room' }, ATTACK);
    const victim = await seatedRoom(svc.base, { about: 'The victim room' }, 2);
    // Half long-polls, half streams, each with its own seat: only the address ties them together.
    const attempts = attacker.tokens.map((token, i) =>
      i % 2 === 0
        ? get(svc.base, `/api/rooms/${attacker.slug}/next-action?wait=30`, '127.0.0.1', token)
        : get(svc.base, `/api/rooms/${attacker.slug}/events/stream`, '127.0.0.1', token),
    );
    held.push(...attempts);
    // Every attempt is either parked or already refused.
    const refusals: number[] = [];
    await eventually(async () => {
      const settled = await Promise.all(
        attempts.map((a) => Promise.race([a.status, new Promise<number>((r) => setTimeout(() => r(-1), 10))])),
      );
      const answered = settled.filter((s, i) => s !== -1 && !(s === 200 && i % 2 === 1));
      refusals.splice(0, refusals.length, ...answered);
      return parked() + answered.length === ATTACK;
    }, 15_000);
    expect(refusals.length).toBeGreaterThan(0);
    expect(parked()).toBeLessThan(POOL);

    // Another client (another address) is still served: a long-poll and a stream.
    const poll = get(svc.base, `/api/rooms/${victim.slug}/next-action?wait=1`, '127.0.0.2', victim.tokens[1]);
    expect(await poll.status).toBe(200);
    expect(JSON.parse(await poll.body).status).toBe('timeout');
    const stream = get(svc.base, `/api/rooms/${victim.slug}/events/stream`, '127.0.0.2', victim.tokens[1]);
    held.push(stream);
    expect(await stream.status).toBe(200);
    stream.abort();

    // The attacker's refusals are its own rate limit: 429 with Retry-After and an actionable message.
    const refused = get(svc.base, `/api/rooms/${attacker.slug}/next-action?wait=30`, '127.0.0.1', attacker.tokens[0]);
    expect(await refused.status).toBe(429);
    const envelope = JSON.parse(await refused.body);
    expect(envelope.error.code).toBe('rate_limit.exceeded');
    expect(envelope.error.details.scope).toBe('ip');
    expect(envelope.error.message).toMatch(/waiting connections/);

    // An MCP wait from the attacker's address counts against the same share.
    const session = await connectModern(`${svc.base}/mcp`);
    try {
      const outcome = await session.call('wait', { slug: attacker.slug, token: attacker.tokens[1], wait_seconds: 30 });
      expect(outcome.isError).toBe(true);
      expect(outcome.body.error.code).toBe('rate_limit.exceeded');
    } finally {
      await session.close();
    }
    for (const a of attempts) a.abort();
    await eventually(() => parked() === 0, 5000);
  }, 60_000);

  it('an MCP batch of 110 % of the pool in wait calls from one address leaves others served', async () => {
    const attacker = await seatedRoom(svc.base, { about: 'The batch room' }, ATTACK);
    const victim = await seatedRoom(svc.base, { about: 'Another victim room' }, 2);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-03-26',
    };
    const initialize = {
      protocolVersion: '2025-03-26',
      capabilities: {},
      clientInfo: { name: 'attacker', version: '1' },
    };
    await fetch(`${svc.base}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize }),
    }).then((r) => r.text());
    // One HTTP request (from 127.0.0.1) carrying a wait per seat. Whether the service counts each
    // call or refuses batches outright, the pool must stay open to others.
    const batch = attacker.tokens.map((token, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'wait', arguments: { slug: attacker.slug, token, wait_seconds: 5 } },
    }));
    const controller = new AbortController();
    const sent = fetch(`${svc.base}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify(batch),
      signal: controller.signal,
    })
      .then((r) => r.text())
      .catch(() => '');
    await sleep(500);
    expect(svc.service.engagement.waiters.parked).toBeLessThanOrEqual(svc.service.engagement.capacity.addressLimit);
    const poll = get(svc.base, `/api/rooms/${victim.slug}/next-action?wait=1`, '127.0.0.2', victim.tokens[1]);
    expect(await poll.status).toBe(200);
    const stream = get(svc.base, `/api/rooms/${victim.slug}/events/stream`, '127.0.0.2', victim.tokens[1]);
    held.push(stream);
    expect(await stream.status).toBe(200);
    stream.abort();
    controller.abort();
    await sent;
    await eventually(() => parked() === 0, 10_000);
  }, 60_000);

  it('one credential holds at most its share; another credential on the same address is still served', async () => {
    const room = await seatedRoom(svc.base, { about: 'One greedy seat' }, 2);
    const greedy = [0, 1, 2].map(() =>
      get(svc.base, `/api/rooms/${room.slug}/next-action?wait=30`, '127.0.0.3', room.tokens[0]),
    );
    held.push(...greedy);
    await eventually(() => svc.service.engagement.waiters.parked >= 1);
    const statuses = await Promise.all(
      greedy.map((g) => Promise.race([g.status, new Promise<number>((r) => setTimeout(() => r(-1), 500))])),
    );
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    const refusal = JSON.parse(await greedy[statuses.indexOf(429)]!.body);
    expect(refusal.error.details.scope).toBe('credential');
    expect(refusal.error.details.limit).toBe(1);

    const other = get(svc.base, `/api/rooms/${room.slug}/next-action?wait=1`, '127.0.0.3', room.tokens[1]);
    expect(await other.status).toBe(200);
    for (const g of greedy) g.abort();
  }, 30_000);
});
