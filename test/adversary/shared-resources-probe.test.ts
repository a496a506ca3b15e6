/**
 * Attacks on resources every client shares, over real HTTP: can one client take one from the others?
 *
 * - Webhooks to one receiving origin: the service-wide limit (WEBHOOK_MAX_PER_ORIGIN) is one budget
 *   for every room. Before, one client address registering across a few rooms of its own (one seat
 *   each: the per-seat and per-room limits never bind) held the whole budget, and every other client's
 *   registration to that origin (a popular receiver: a chat service's or an automation platform's
 *   hooks) was refused until the attacker unregistered. One address now holds at most its share
 *   (WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS), an IPv6 /64 counting as one, as every per-address limit does.
 * - Request bodies in flight: a body is buffered whole, and may take 30 s to arrive. Before, one
 *   address trickling bodies of just under the 4 MiB limit on as many sockets as the per-address
 *   socket cap allows held that many times 4 MiB (300 uploads: 1.2 GiB more RSS). A body now reserves
 *   its declared length from MAX_BODY_BYTES_IN_FLIGHT before it is read; one address holds a tenth
 *   (at least one body of the limit), then 429, and a full budget answers 503 with Retry-After. A
 *   chunked body is charged what it has sent, so streamed small bodies are not each charged 4 MiB.
 * - The waiting pool full (MAX_PARKED_CONNECTIONS, taken by other clients): an event stream and an MCP
 *   `wait` are refused at once with the 503 envelope and Retry-After, never left hanging (the REST
 *   long-poll's refusal is kept by test/e2e/engagement-long-poll.test.ts).
 *
 * Addresses are told apart by X-Forwarded-For from the one trusted hop (TRUST_PROXY=127.0.0.1).
 */
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, seatedRoom } from '../support/engagement.js';
import { rpc } from '../support/mcp-clients.js';
import { startRedisServer, storeVariants } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const from = (address: string) => ({ 'x-forwarded-for': address });

/** A POST that declares `length` bytes of body from `address` and sends only its first bytes. */
function upload(base: string, path: string, address: string, length: number): { socket: Socket; answer: string[] } {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  const answer: string[] = [];
  socket.on('data', (chunk: Buffer) => answer.push(chunk.toString()));
  socket.on('error', () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nX-Forwarded-For: ${address}\r\nContent-Length: ${length}\r\n\r\n{"about":"`,
  );
  return { socket, answer };
}

/** A room created from `address`, with its creator's token. */
async function roomFrom(base: string, address: string, about: string): Promise<{ slug: string; token: string }> {
  const created = await call(base, 'POST', '/api/rooms', { body: { about }, headers: from(address) });
  expect(created.status).toBe(200);
  return { slug: created.body.slug, token: created.body.creator_token };
}

function register(base: string, address: string, room: { slug: string; token: string }, url: string) {
  return call(base, 'POST', `/api/rooms/${room.slug}/webhooks`, {
    token: room.token,
    body: { url },
    headers: from(address),
  });
}

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

const STORES = storeVariants(redis, 'shared-resources');

describe.each(STORES)('webhooks to one origin across the service ($store)', ({ store, env }) => {
  const skip = store === 'redis' && !redis;
  let svc: RunningService;
  beforeAll(async () => {
    if (skip) return;
    svc = await startService({
      env: {
        TRUST_PROXY: '127.0.0.1',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_MAX_PER_ORIGIN: '10',
        WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS: '3',
        ...env(),
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it.skipIf(skip)(
    'one address holds at most its share of an origin; other clients still register to it',
    async () => {
      // Port 9 refuses connections: each verification is retried after 5 s and 5 min, so the attacker's
      // subscriptions stay active (awaiting consent) for minutes, as long as the attack needs.
      const origin = 'http://127.0.0.1:9';
      const attacker = '203.0.113.7';
      const rooms = [0, 1, 2, 3, 4].map((i) => roomFrom(svc.base, attacker, `Squatter ${i}`));
      const attackerRooms = await Promise.all(rooms);
      const answers = [];
      // Two registrations per room (one seat each, far below every per-room and per-seat limit).
      for (const [i, room] of attackerRooms.entries()) {
        for (const j of [0, 1]) answers.push(await register(svc.base, attacker, room, `${origin}/squat-${i}-${j}`));
      }
      expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
      const refused = answers.find((a) => a.status !== 200)!;
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('input.invalid');
      expect(refused.body.error.details).toMatchObject({
        reason: 'webhook_origin_cap_reached',
        cap: 3,
        origin,
        scope: 'address',
      });
      expect(refused.body.error.message).toMatch(/from this client address/);
      expect(refused.body.error.message).toMatch(/DELETE \/api\/rooms\//);
      // Another /64 address of the same IPv6 client is the same client.
      const v6 = await roomFrom(svc.base, '2001:db8:7:7::1', 'IPv6 squatter');
      for (let i = 0; i < 3; i++)
        expect((await register(svc.base, '2001:db8:7:7::1', v6, `${origin}/v6-${i}`)).status).toBe(200);
      const sameBlock = await register(svc.base, '2001:db8:7:7:ffff::2', v6, `${origin}/v6-more`);
      expect(sameBlock.status).toBe(400);
      expect(sameBlock.body.error.details).toMatchObject({ reason: 'webhook_origin_cap_reached', scope: 'address' });

      // Another client registers to the same origin.
      const victim = await roomFrom(svc.base, '198.51.100.9', 'Victim');
      expect((await register(svc.base, '198.51.100.9', victim, `${origin}/victim`)).status).toBe(200);

      // The service-wide limit still holds for the origin: three more addresses reach it.
      const helper = await roomFrom(svc.base, '198.51.100.10', 'Helper');
      for (let i = 0; i < 3; i++)
        expect((await register(svc.base, '198.51.100.10', helper, `${origin}/helper-${i}`)).status).toBe(200);
      const whole = await register(
        svc.base,
        '198.51.100.11',
        await roomFrom(svc.base, '198.51.100.11', 'Late'),
        `${origin}/late`,
      );
      expect(whole.status).toBe(400);
      expect(whole.body.error.details).toMatchObject({
        reason: 'webhook_origin_cap_reached',
        cap: 10,
        scope: 'service',
      });
      expect(whole.body.error.message).toMatch(/from this service/);

      // Unregistering frees the attacker's share.
      const mine = await call(svc.base, 'GET', `/api/rooms/${attackerRooms[0]!.slug}/webhooks`, {
        token: attackerRooms[0]!.token,
        headers: from(attacker),
      });
      const id = mine.body.webhooks[0].id as string;
      await call(svc.base, 'DELETE', `/api/rooms/${attackerRooms[0]!.slug}/webhooks/${id}`, {
        token: attackerRooms[0]!.token,
        headers: from(attacker),
      });
      expect((await register(svc.base, attacker, attackerRooms[4]!, 'http://127.0.0.1:9/again')).status).toBe(200);
    },
    60_000,
  );

  it.skipIf(skip)(
    'counts only subscriptions awaiting consent: an agent host whose receiver consents registers past the share',
    async () => {
      // The host's own receiver answers every delivery, its verification included, with 204.
      const receiver = createServer((request, response) => {
        request.resume();
        request.on('end', () => response.writeHead(204).end());
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      const host = '198.51.100.40';
      try {
        const rooms = await Promise.all([0, 1, 2, 3, 4].map((i) => roomFrom(svc.base, host, `Task ${i}`)));
        for (const [i, room] of rooms.entries()) {
          // One at a time, each consented to before the next: the share (3) never binds.
          expect((await register(svc.base, host, room, `${url}/task-${i}`)).status).toBe(200);
          await eventually(async () => {
            const listed = await call(svc.base, 'GET', `/api/rooms/${room.slug}/webhooks`, { token: room.token });
            return listed.body.webhooks[0]?.verified_at != null;
          });
        }
      } finally {
        receiver.close();
      }
    },
    60_000,
  );
});

/** A chunked POST from `address`: its head and a first chunk now; `more` sends further chunks, `end` the last. */
function chunked(base: string, path: string, address: string) {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  const answer: string[] = [];
  socket.on('data', (chunk: Buffer) => answer.push(chunk.toString()));
  socket.on('error', () => {});
  const chunk = (text: string) => socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
      `X-Forwarded-For: ${address}\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  chunk('{"about":"');
  return {
    socket,
    answer,
    more: (bytes: number) => chunk('x'.repeat(bytes)),
    end: () => {
      chunk('"}');
      socket.write('0\r\n\r\n');
    },
  };
}

describe('request bodies in flight', () => {
  const MiB = 1024 * 1024;
  let svc: RunningService;
  const held: Socket[] = [];
  beforeAll(async () => {
    // 16 MiB in all; one address may hold 4 MiB (a tenth, raised to one body of the limit).
    svc = await startService({ env: { TRUST_PROXY: '127.0.0.1', MAX_BODY_BYTES_IN_FLIGHT: String(16 * MiB) } });
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await svc.stop();
  });

  it('one address trickling bodies holds at most its share; others are served, and refused with 503 once it is all taken', async () => {
    // Six uploads of 1 MiB from one address, on REST and MCP: four fit its share, two are refused at once.
    const attack = [0, 1, 2, 3, 4, 5].map((i) => upload(svc.base, i % 2 ? '/mcp' : '/api/rooms', '203.0.113.9', MiB));
    held.push(...attack.map((a) => a.socket));
    const answered = () => attack.filter((a) => a.answer.length > 0);
    await eventually(() => answered().length === 2);
    for (const refused of answered()) {
      const text = refused.answer.join('');
      expect(text).toMatch(/^HTTP\/1\.1 429 /);
      expect(text).toMatch(/\r\nretry-after: 1\r\n/i);
      const envelope = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      expect(envelope.error.code).toBe('rate_limit.exceeded');
      expect(envelope.error.details).toMatchObject({ scope: 'ip', limit: 4 * MiB });
    }

    // Another client is served meanwhile.
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Served' },
      headers: from('198.51.100.20'),
    });
    expect(created.status).toBe(200);

    // Three more addresses take the rest: then every body is refused with 503, whoever sends it.
    for (const address of ['198.51.100.30', '198.51.100.31', '198.51.100.32']) {
      held.push(...[0, 1, 2, 3].map(() => upload(svc.base, '/api/rooms', address, MiB).socket));
    }
    await eventually(async () => {
      const full = await call(svc.base, 'POST', '/api/rooms', {
        body: { about: 'Late' },
        headers: from('198.51.100.21'),
      });
      if (full.status !== 503) return false;
      expect(full.headers.get('retry-after')).toBe('1');
      expect(full.body.error.code).toBe('vendor:conclave:unavailable');
      return true;
    });
    // A request without a body is not counted.
    const read = await call(svc.base, 'GET', `/api/rooms/${created.body.slug}`, {
      token: created.body.creator_token,
      headers: from('198.51.100.21'),
    });
    expect(read.status).toBe(200);

    // Cancelled uploads give their bytes back.
    for (const socket of held) socket.destroy();
    await eventually(async () => {
      const again = await call(svc.base, 'POST', '/api/rooms', {
        body: { about: 'Again' },
        headers: from('203.0.113.9'),
      });
      return again.status === 200;
    });
  }, 30_000);

  it('counts what a chunked body has sent, not the most it could: small ones in parallel are served', async () => {
    // A client library streaming its JSON (no Content-Length) opens several requests from one address.
    const uploads = [0, 1, 2, 3, 4, 5].map(() => chunked(svc.base, '/api/rooms', '198.51.100.50'));
    held.push(...uploads.map((u) => u.socket));
    for (const upload of uploads) upload.end();
    await eventually(() => uploads.every((u) => u.answer.join('').includes('\r\n\r\n')));
    for (const upload of uploads) expect(upload.answer.join('')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('answers a chunked body past the body limit 413, its own share notwithstanding', async () => {
    const big = chunked(svc.base, '/api/rooms', '203.0.113.61');
    held.push(big.socket);
    big.more(4 * MiB + 1024);
    big.end();
    await eventually(() => big.answer.length > 0);
    expect(big.answer.join('')).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('refuses a chunked body once what its address has sent passes the share', async () => {
    const first = chunked(svc.base, '/api/rooms', '203.0.113.60');
    const second = chunked(svc.base, '/api/rooms', '203.0.113.60');
    held.push(first.socket, second.socket);
    first.more(3 * MiB);
    await eventually(() => first.socket.bytesWritten > 3 * MiB);
    second.more(3 * MiB);
    await eventually(() => second.answer.length > 0 || first.answer.length > 0);
    const refused = (second.answer.length > 0 ? second : first).answer.join('');
    expect(refused).toMatch(/^HTTP\/1\.1 429 /);
    const envelope = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4));
    expect(envelope.error.code).toBe('rate_limit.exceeded');
    expect(envelope.error.details).toMatchObject({ scope: 'ip', limit: 4 * MiB });
    // Another address is served meanwhile.
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Served' },
      headers: from('198.51.100.51'),
    });
    expect(created.status).toBe(200);
  });
});

describe('the waiting pool full of other clients', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { MAX_PARKED_CONNECTIONS: '2', TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('refuses an event stream and an MCP wait at once with the 503 envelope, never a hang', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Full' }, 4);
    const polls = [0, 1].map((i) =>
      call(svc.base, 'GET', `/api/rooms/${slug}/next-action?wait=3`, {
        token: tokens[i],
        headers: from(`10.0.0.${i + 1}`),
      }),
    );
    await eventually(() => svc.service.engagement.waiters.parked === 2);

    const stream = await fetch(`${svc.base}/api/rooms/${slug}/events/stream`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${tokens[2]}`, ...from('10.0.0.3') },
      signal: AbortSignal.timeout(5000),
    });
    expect(stream.status).toBe(503);
    expect(stream.headers.get('retry-after')).toBe('1');
    expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await stream.json()) as { error: { code: string } }).error.code).toBe('vendor:conclave:unavailable');

    const wait = await rpc(
      `${svc.base}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'wait', arguments: { slug, token: tokens[3], wait_seconds: 30 } },
      }),
      { 'mcp-protocol-version': '2025-11-25', ...from('10.0.0.4') },
    );
    expect(wait.status).toBe(200);
    expect(wait.json.result.isError).toBe(true);
    expect(wait.json.result.structuredContent.error.code).toBe('vendor:conclave:unavailable');
    for (const poll of await Promise.all(polls)) expect(poll.body.status).toBe('timeout');
  }, 30_000);
});
