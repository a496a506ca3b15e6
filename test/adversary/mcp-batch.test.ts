/**
 * Attacks through MCP framing, over real HTTP: a JSON-RPC batch must not turn one request into a
 * hundred against the rate limits (creates, joins) or into a hundred parked waits, on any protocol
 * version a client may claim; and the service negotiates only the MCP versions it says it supports
 * (2026-07-28 and the stateless 2025-11-25), answering every other request the way the MCP
 * specification prescribes instead of serving it with another version's rules.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PROTOCOL_VERSIONS } from '../../src/mcp/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { connectLegacy, connectModern, ok } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const IP_LIMIT = 40;
const BATCH = 100;

interface Exchange {
  status: number;
  /** Every JSON-RPC message of the answer, whether sent as one JSON body or as SSE frames. */
  messages: any[];
}

/**
 * One HTTP POST of a JSON-RPC body; headers claim `version` unless it is null (no header). Unlike
 * `rpc` of mcp-clients.ts it keeps every message of a batch answer, and it can be aborted.
 */
async function post(
  url: string,
  body: unknown,
  version: string | null,
  options: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Exchange> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(version !== null ? { 'mcp-protocol-version': version } : {}),
      ...options.headers,
    },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  const payloads = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line.length > 6)
        .map((line) => line.slice(6))
    : [text];
  const messages = payloads.filter((p) => p.trim() !== '').flatMap((p) => [JSON.parse(p)].flat());
  return { status: response.status, messages };
}

function toolCall(name: string, args: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id: randomUUID(), method: 'tools/call', params: { name, arguments: args } };
}

function batchOf(count: number, make: (i: number) => Record<string, unknown>): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => make(i));
}

/** Tool results that succeeded (the call took effect). */
function succeeded(exchange: Exchange): any[] {
  return exchange.messages.filter((m) => m.result !== undefined && m.result.isError !== true);
}

/**
 * What the limit allows of a refused batch: either the whole batch answered with one JSON-RPC
 * error a client can act on, or each call past the limit answered with `rate_limit.exceeded`.
 */
function expectNoMultiplication(exchange: Exchange): void {
  for (const message of exchange.messages) {
    if (message.error !== undefined) {
      expect(message.error.code).toBe(-32600);
      expect(message.error.message).toMatch(/batch/i);
    } else if (message.result?.isError === true) {
      expect(message.result.structuredContent.error.code).toBe('rate_limit.exceeded');
    }
  }
}

/** The versions an attacker claims: every 2025 revision the SDK knows, and none (no header at all). */
const CLAIMED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', null] as const;

describe('a JSON-RPC batch against the per-address limit', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({
      clock,
      env: { RATE_LIMIT_IP_PER_MIN: String(IP_LIMIT), RATE_LIMIT_CREDENTIAL_PER_MIN: '120' },
    });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`creates at most ${IP_LIMIT} rooms a minute from batches of ${BATCH} create_room calls`, async () => {
    let created = 0;
    for (const version of CLAIMED_VERSIONS) {
      const batch = batchOf(BATCH, (i) => toolCall('create_room', { about: `batch room ${i}` }));
      const answer = await post(`${svc.base}/mcp/host`, batch, version);
      created += succeeded(answer).length;
      expectNoMultiplication(answer);
    }
    expect(created).toBeLessThanOrEqual(IP_LIMIT);
  });

  it('answers a batch with a JSON-RPC error that tells the client to send one call per request', async () => {
    clock.advance(61_000);
    const answer = await post(
      `${svc.base}/mcp/host`,
      batchOf(2, () => toolCall('list_rooms', {})),
      '2025-11-25',
    );
    expect(answer.status).toBe(400);
    expect(answer.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: expect.objectContaining({ code: -32600, message: expect.stringMatching(/one .*per request/i) }),
      },
    ]);
    // A single-element array is still a batch.
    const single = await post(`${svc.base}/mcp/host`, [toolCall('list_rooms', {})], null);
    expect(single.status).toBe(400);
    expect(single.messages[0].error.code).toBe(-32600);
  });

  it('still serves one call per request, each counted against the limit', async () => {
    clock.advance(61_000);
    const answers: Exchange[] = [];
    for (let i = 0; i < IP_LIMIT + 2; i++) {
      answers.push(await post(`${svc.base}/mcp/host`, toolCall('create_room', { about: `single ${i}` }), '2025-11-25'));
    }
    expect(answers.filter((a) => a.status === 200 && succeeded(a).length === 1)).toHaveLength(IP_LIMIT);
    expect(answers.slice(IP_LIMIT).map((a) => a.status)).toEqual([429, 429]);
  });
});

const redis = await startRedisServer();
afterAll(async () => {
  await redis?.stop();
});

describe.skipIf(redis === null)('a JSON-RPC batch against the per-address limit kept in Redis', () => {
  it(`creates at most ${IP_LIMIT} rooms a minute across two processes`, async () => {
    const clock = new ManualClock(Date.now());
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `adv-${randomUUID().slice(0, 8)}:`,
      RATE_LIMIT_IP_PER_MIN: String(IP_LIMIT),
    };
    const processes = [await startService({ clock, env }), await startService({ clock, env })];
    try {
      let created = 0;
      for (const [i, version] of CLAIMED_VERSIONS.entries()) {
        const batch = batchOf(BATCH, (n) => toolCall('create_room', { about: `redis batch room ${n}` }));
        const answer = await post(`${processes[i % 2]!.base}/mcp/host`, batch, version);
        created += succeeded(answer).length;
        expectNoMultiplication(answer);
      }
      expect(created).toBeLessThanOrEqual(IP_LIMIT);
    } finally {
      for (const svc of processes) await svc.stop();
    }
  });
});

describe('a JSON-RPC batch of joins', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { RATE_LIMIT_IP_PER_MIN: String(IP_LIMIT) } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`seats at most ${IP_LIMIT} joiners a minute from batches of ${BATCH} join_room calls`, async () => {
    const room = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'a room to flood', config: { max_participants: 1000 } },
    });
    expect(room.status).toBe(200);
    let joined = 0;
    for (const version of CLAIMED_VERSIONS) {
      const batch = batchOf(BATCH, (i) => toolCall('join_room', { slug: room.body.slug, display_name: `bot-${i}` }));
      const answer = await post(`${svc.base}/mcp`, batch, version);
      joined += succeeded(answer).length;
      expectNoMultiplication(answer);
    }
    expect(joined).toBeLessThanOrEqual(IP_LIMIT - 1);
  });
});

describe('a JSON-RPC batch of waits', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { RATE_LIMIT_IP_PER_MIN: String(IP_LIMIT) } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it(`parks at most ${IP_LIMIT} waits from one request of ${BATCH} wait calls`, async () => {
    const room = await call(svc.base, 'POST', '/api/rooms', { body: { about: 'a quiet room' } });
    const { slug, creator_token: token } = room.body;
    const head = (await call(svc.base, 'GET', `/api/rooms/${slug}`, { token })).body.current_through;
    const abort = new AbortController();
    const batch = batchOf(BATCH, () => toolCall('wait', { slug, token, since: head, wait_seconds: 30 }));
    let settled = false;
    const answer = post(`${svc.base}/mcp`, batch, '2025-11-25', { signal: abort.signal }).finally(() => {
      settled = true;
    });
    answer.catch(() => undefined);
    // Watch the waiting capacity until the batch is answered (refused) or has had time to park everything.
    let mostParked = 0;
    const giveUpAt = Date.now() + 3000;
    while (!settled && Date.now() < giveUpAt) {
      mostParked = Math.max(mostParked, svc.service.engagement.waiters.parked);
      await sleep(10);
    }
    mostParked = Math.max(mostParked, svc.service.engagement.waiters.parked);
    abort.abort();
    expect(mostParked).toBeLessThanOrEqual(IP_LIMIT);
    if (settled) expectNoMultiplication(await answer);
  });
});

describe('MCP protocol version negotiation', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  const initialize = (version: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'old-client', version: '1.0.0' } },
  });

  it.each(['2025-06-18', '2025-03-26', '2024-11-05', '2099-01-01'])(
    'answers initialize for %s with the 2025-era version it supports',
    async (requested) => {
      for (const path of ['/mcp', '/mcp/host']) {
        const answer = await post(`${svc.base}${path}`, initialize(requested), null);
        expect(answer.status).toBe(200);
        expect(answer.messages[0].result.protocolVersion).toBe('2025-11-25');
      }
    },
  );

  it('answers initialize for 2025-11-25 as requested', async () => {
    const answer = await post(`${svc.base}/mcp`, initialize('2025-11-25'), null);
    expect(answer.messages[0].result.protocolVersion).toBe('2025-11-25');
  });

  it.each(['2025-06-18', '2025-03-26'])(
    'refuses a request that claims %s in MCP-Protocol-Version with 400 naming the supported versions',
    async (claimed) => {
      const answer = await post(`${svc.base}/mcp/host`, toolCall('create_room', { about: 'old rules' }), claimed);
      expect(answer.status).toBe(400);
      expect(answer.messages[0].error.message).toContain(claimed);
      expect(answer.messages[0].error.message).toContain('2025-11-25');
      // Named once, as the version asked for: it is not among the supported ones.
      expect(answer.messages[0].error.message.split(claimed)).toHaveLength(2);
    },
  );

  it('lists only 2026-07-28 in server/discover, and the service document names the same versions', async () => {
    const discover = await post(
      `${svc.base}/mcp`,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      '2026-07-28',
      { headers: { 'mcp-method': 'server/discover' } },
    );
    expect(discover.messages[0].result.supportedVersions).toEqual(['2026-07-28']);
    const document = await call(svc.base, 'GET', '/.well-known/svc.json');
    expect(document.body.transports.mcp_protocol_versions).toEqual([...MCP_PROTOCOL_VERSIONS]);
  });

  it("keeps the SDK's own clients of both eras working", async () => {
    for (const connect of [connectModern, connectLegacy]) {
      const session = await connect(`${svc.base}/mcp/host`);
      try {
        expect(MCP_PROTOCOL_VERSIONS).toContain(session.negotiatedVersion);
        expect(await ok(session, 'create_room', { about: `era ${session.era}` })).toMatchObject({ ok: true });
      } finally {
        await session.close();
      }
    }
  });
});
