/**
 * Room affinity in the shipped nginx template (deploy/nginx/nginx.conf.template): every request
 * that names a room — in its path (REST, the room page) or as the `slug` argument of an MCP tool
 * call in its body (both eras) — goes to one process while that process is up, different rooms
 * spread over the processes, requests that name no room spread evenly, and a room whose process is
 * kill -9ed is served by one other process until its own comes back. Correctness never rests on this (the Redis
 * lock and fencing do); what it buys is a busy room's state staying warm in one process.
 *
 * First against three tiny backends that say who they are (every path form the service has, exactly,
 * and MCP bodies as the SDK clients of both eras write them, plus the shapes the body pattern must
 * not be fooled by), then against three real service processes on one Redis, each process's share read from its own
 * `GET /metrics`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { newLedger, write } from '../support/ledger.js';
import { connectLegacy, connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { checkNginxConfig, type Fleet, hasNginx, type Nginx, startFleet, startNginx } from '../support/topology.js';

/** Every path form that names a room, as the service routes them (src/http/routes.ts, the room page). */
function roomRequests(slug: string): { method: string; path: string }[] {
  const encoded = `%${slug.charCodeAt(0).toString(16)}${slug.slice(1)}`;
  return [
    { method: 'GET', path: `/api/rooms/${slug}` },
    { method: 'DELETE', path: `/api/rooms/${slug}` },
    { method: 'GET', path: `/api/rooms/${slug}/` },
    { method: 'POST', path: `/api/rooms/${slug}/join` },
    { method: 'POST', path: `/api/rooms/${slug}/choose` },
    { method: 'GET', path: `/api/rooms/${slug}/choose?choice=a` },
    { method: 'GET', path: `/api/rooms/${slug}/next-action?wait=30` },
    { method: 'GET', path: `/api/rooms/${slug}/events?after=3&limit=10` },
    { method: 'GET', path: `/api/rooms/${slug}/events/stream` },
    { method: 'PATCH', path: `/api/rooms/${slug}/settings` },
    { method: 'DELETE', path: `/api/rooms/${slug}/members/p_1` },
    { method: 'DELETE', path: `/api/rooms/${slug}/invites/abc` },
    { method: 'GET', path: `/api/rooms/${encoded}/outcome` },
    { method: 'GET', path: `/r/${slug}` },
    { method: 'GET', path: `/r/${slug}?embed=1` },
  ];
}

/** Paths that name no room: creation, MCP (the room is in the body), discovery, OAuth, probes. */
const SLUGLESS = [
  { method: 'POST', path: '/api/rooms' },
  { method: 'POST', path: '/api/rooms/' },
  { method: 'POST', path: '/mcp' },
  { method: 'POST', path: '/mcp/host' },
  { method: 'GET', path: '/.well-known/svc.json' },
  { method: 'GET', path: '/v1/openapi.json' },
  { method: 'POST', path: '/oauth/token' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/api/rooms/' },
];

/**
 * Fixed slugs that look like the service's (10 characters of its alphabet, from a hash), so which
 * backend owns which is the same every run: nginx's plain hash picks by the key and the order of the
 * server lines, not by their ports. (Slugs that differ in one character would not do: CRC32, which
 * nginx hashes with, spreads such near-twins unevenly.)
 */
const SLUG_ALPHABET = 'abcdefghjkmnpqrstvwxyz23456789';
const SLUGS = Array.from({ length: 24 }, (_, i) =>
  [...createHash('sha256').update(`room-${i}`).digest().subarray(0, 10)]
    .map((byte) => SLUG_ALPHABET[byte % SLUG_ALPHABET.length])
    .join(''),
);

/** The `_meta` the 2026-07-28 era's client sends with every request (captured from the SDK's client). */
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'conclave-e2e', version: '0.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A tools/call body exactly as each era's SDK client serializes it. */
function toolCall(era: 'modern' | 'legacy', name: string, args: Record<string, unknown>, id = 1): string {
  return era === 'modern'
    ? JSON.stringify({
        method: 'tools/call',
        params: { name, arguments: args, _meta: MODERN_META },
        jsonrpc: '2.0',
        id,
      })
    : JSON.stringify({ method: 'tools/call', params: { name, arguments: args }, jsonrpc: '2.0', id });
}

/** Every room tool call of the agents' loop (join_room, wait, choose, discuss) in both eras, on both MCP paths. */
function mcpRoomRequests(slug: string): { method: string; path: string; body: string }[] {
  const token = 't_7QNvxtU4XQpHknc-iPoLTAPQC_X74t_0KQzrm7pBNs8';
  const calls: [string, Record<string, unknown>][] = [
    ['join_room', { slug, display_name: 'agent-1' }],
    ['wait', { slug, token, wait_seconds: 30 }],
    ['choose', { slug, token, choice: ['beta', 'gamma', 'alpha'] }],
    ['discuss', { slug, token, body: 'agent 1 ranked beta first' }],
    ['outcome', { slug }],
  ];
  return (['modern', 'legacy'] as const).flatMap((era) =>
    ['/mcp', '/mcp/host'].flatMap((path) =>
      calls.map(([name, args], i) => ({ method: 'POST', path, body: toolCall(era, name, args, i) })),
    ),
  );
}

/** MCP requests that name no room: handshakes of both eras, listings, slug-less tools. */
const MCP_SLUGLESS = [
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'server-discover-probe-1',
    method: 'server/discover',
    params: { _meta: MODERN_META },
  }),
  JSON.stringify({
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    jsonrpc: '2.0',
    id: 0,
  }),
  JSON.stringify({ method: 'tools/list', jsonrpc: '2.0', id: 2 }),
  toolCall('legacy', 'create_room', { question: 'Where?', options: ['a', 'b'] }),
  toolCall('modern', 'list_rooms', {}),
];

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Backend {
  port: number;
  server: Server;
  /** Responses to `?sse` requests still held open by this backend. */
  streams: Set<() => void>;
}

interface Landing {
  backend: number;
  /** sha256 of the body the backend received, to show nginx passed it on whole. */
  digest: string;
}

/**
 * A backend that answers every request with its own index and the digest of the body it got: who
 * nginx chose, nothing else. With `?sse` in the query it answers as a server-sent event stream
 * instead: one event at once, the rest held until the test releases it.
 */
async function startBackend(index: number, port: number): Promise<Backend> {
  const streams = new Set<() => void>();
  const server = createServer((request, response) => {
    const hash = createHash('sha256');
    request.on('data', (chunk: Buffer) => hash.update(chunk));
    request.on('end', () => {
      const landed: Landing = { backend: index, digest: hash.digest('hex') };
      if (request.url?.includes('?sse')) {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(`event: message\ndata: ${JSON.stringify(landed)}\n\n`);
        const release = () => {
          streams.delete(release);
          response.end('event: message\ndata: {"done":true}\n\n');
        };
        streams.add(release);
        return;
      }
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(landed));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server, streams };
}

async function stopBackend({ server }: Backend): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe.skipIf(!hasNginx)(
  'room affinity in the shipped nginx template, against backends that say who they are',
  () => {
    const backends: Backend[] = [];
    let nginx: Nginx;

    async function landing(request: { method: string; path: string; body?: string }): Promise<number> {
      const body = request.body ?? (request.method === 'GET' ? undefined : '{}');
      const response = await fetch(`${nginx.base}${request.path}`, {
        method: request.method,
        ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
      });
      expect(response.status, `${request.method} ${request.path}`).toBe(200);
      const landed = (await response.json()) as Landing;
      expect(landed.digest, 'the body reached the backend whole').toBe(sha256(body ?? ''));
      return landed.backend;
    }

    async function landings(requests: { method: string; path: string; body?: string }[]): Promise<number[]> {
      const out: number[] = [];
      for (const request of requests) out.push(await landing(request));
      return out;
    }

    /** Where REST requests for `slug` land (one backend, the room's owner). */
    const ownerOf = (slug: string) => landing({ method: 'GET', path: `/api/rooms/${slug}` });

    beforeAll(async () => {
      for (let i = 0; i < 3; i++) backends.push(await startBackend(i, await freePort()));
      nginx = await startNginx(backends.map((backend) => `127.0.0.1:${backend.port}`));
    });
    afterAll(async () => {
      await nginx?.stop();
      await Promise.all(backends.map((backend) => stopBackend(backend).catch(() => undefined)));
    });

    it('nginx -t accepts the rendered template', async () => {
      const { ok, output } = await checkNginxConfig(backends.map((backend) => `127.0.0.1:${backend.port}`));
      expect(output).toContain('syntax is ok');
      expect(ok).toBe(true);
    });

    it('every path form of a room reaches one backend; different rooms spread over all of them', async () => {
      const owners = new Map<string, number>();
      for (const slug of SLUGS) {
        const seen = await landings(roomRequests(slug));
        expect(new Set(seen), `${slug} landed on ${seen.join(',')}`).toHaveLength(1);
        owners.set(slug, seen[0]!);
      }
      const perBackend = [0, 1, 2].map((i) => [...owners.values()].filter((owner) => owner === i).length);
      console.log(
        `affinity: ${SLUGS.length} rooms × ${roomRequests('x').length} path forms; rooms per backend ${perBackend.join('/')}`,
      );
      for (const count of perBackend) expect(count).toBeGreaterThan(0);
      // Asked again, in another order: the same owners.
      for (const slug of [...SLUGS].reverse())
        expect(await landing({ method: 'GET', path: `/api/rooms/${slug}` })).toBe(owners.get(slug));
    });

    it('requests that name no room spread over every backend, not onto one', async () => {
      const requests = Array.from({ length: 90 }, (_, i) => SLUGLESS[i % SLUGLESS.length]!);
      const seen = await landings(requests);
      const perBackend = [0, 1, 2].map((i) => seen.filter((backend) => backend === i).length);
      console.log(`slug-less: ${requests.length} requests per backend ${perBackend.join('/')}`);
      // An even spread gives 30 each; 10 is more than four standard deviations below that.
      for (const count of perBackend) expect(count).toBeGreaterThanOrEqual(10);
    });

    it('every MCP tool call of a room, both eras, both MCP paths, reaches the backend its REST requests reach', async () => {
      const owners = new Map<string, number>();
      for (const slug of SLUGS) {
        const owner = await ownerOf(slug);
        const seen = await landings(mcpRoomRequests(slug));
        expect(new Set(seen), `${slug} (REST on ${owner}) MCP landed on ${seen.join(',')}`).toEqual(new Set([owner]));
        owners.set(slug, owner);
      }
      const perBackend = [0, 1, 2].map((i) => [...owners.values()].filter((owner) => owner === i).length);
      console.log(
        `affinity: ${SLUGS.length} rooms × ${mcpRoomRequests('x').length} MCP calls with their REST owner; rooms per backend ${perBackend.join('/')}`,
      );
      for (const count of perBackend) expect(count).toBeGreaterThan(0);
    });

    it('MCP requests that name no room spread over every backend', async () => {
      const seen = await landings(
        Array.from({ length: 60 }, (_, i) => ({
          method: 'POST',
          path: '/mcp',
          body: MCP_SLUGLESS[i % MCP_SLUGLESS.length]!,
        })),
      );
      const perBackend = [0, 1, 2].map((i) => seen.filter((backend) => backend === i).length);
      console.log(`MCP slug-less: 60 requests per backend ${perBackend.join('/')}`);
      // An even spread gives 20 each; 5 is more than four standard deviations below that.
      for (const count of perBackend) expect(count).toBeGreaterThanOrEqual(5);
    });

    it("only the call's own slug argument counts: not one nested deeper, in _meta, or in message text", async () => {
      const slug = SLUGS[1]!;
      const owner = await ownerOf(slug);
      // Another room with another owner, so that a decoy that won would show.
      let decoy = '';
      for (const candidate of SLUGS) if (!decoy && (await ownerOf(candidate)) !== owner) decoy = candidate;
      expect(decoy).not.toBe('');
      const bodies = [
        // The slug last, after arguments holding other rooms' slugs in objects and arrays.
        toolCall('modern', 'choose', {
          token: 't',
          config: { slug: decoy, deeper: { slug: decoy, list: [{ slug: decoy }] } },
          ranking: [{ slug: decoy }, 'x', 2, true, null],
          slug,
        }),
        // Message text that spells a slug member, before the real one.
        toolCall('legacy', 'discuss', { token: 't', body: `see "slug":"${decoy}", {"slug": "${decoy}"}`, slug }),
        // _meta first, naming another room and even an "arguments" of its own.
        JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          params: { _meta: { slug: decoy, arguments: { slug: decoy } }, name: 'wait', arguments: { slug } },
          method: 'tools/call',
        }),
        // A top-level "arguments" and "slug" besides params (not where a tool call's are).
        JSON.stringify({
          slug: decoy,
          arguments: { slug: decoy },
          method: 'tools/call',
          params: { arguments: { slug } },
        }),
        // Whitespace and newlines anywhere JSON allows them.
        ` {\n "method" : "tools/call" ,\r\n\t"params" : { "name" : "wait" , "arguments" : {\n "slug" : "${slug}" } } , "id" : 1 }\n`,
      ];
      for (const body of bodies) {
        for (let i = 0; i < 6; i++) expect(await landing({ method: 'POST', path: '/mcp', body }), body).toBe(owner);
      }
    });

    it('calls whose slug nginx cannot read safely spread, and reach the backend whole', async () => {
      const slug = SLUGS[2]!;
      const escaped = toolCall('legacy', 'wait', { slug }).replace(
        `"${slug}"`,
        `"\\u00${slug.charCodeAt(0).toString(16)}${slug.slice(1)}"`,
      );
      expect(JSON.parse(escaped).params.arguments.slug).toBe(slug);
      const spreading = {
        'an escaped slug': escaped,
        'a slug only nested in another argument': toolCall('modern', 'wait', { config: { slug } }),
        'a slug that is not a string': toolCall('modern', 'wait', { slug: 12345 }),
        'a batch': `[${toolCall('legacy', 'wait', { slug })}]`,
        'a body that is not JSON': `slug=${slug}`,
        'nesting deeper than the pattern walks': toolCall('legacy', 'wait', { a: [[[[[[1]]]]]], slug }),
        // Bigger than client_body_buffer_size (128k, and the quarter more nginx allows a body of known
        // length): nginx keeps it in a temp file, and $request_body does not exist.
        'a body bigger than the buffer': toolCall('modern', 'discuss', { slug, token: 't', body: 'x'.repeat(200_000) }),
      };
      for (const [what, body] of Object.entries(spreading)) {
        const seen = await landings(Array.from({ length: 24 }, () => ({ method: 'POST', path: '/mcp', body })));
        expect(new Set(seen).size, `${what} landed on ${seen.join(',')}`).toBeGreaterThan(1);
      }
      // Just under the buffer, the slug is read and the call goes home.
      const owner = await ownerOf(slug);
      const large = toolCall('modern', 'discuss', { slug, token: 't', body: 'y'.repeat(120_000) });
      for (let i = 0; i < 6; i++) expect(await landing({ method: 'POST', path: '/mcp', body: large })).toBe(owner);
    });

    it('bodies built to make the pattern backtrack cost nginx no more than a pass over them', async () => {
      // A pattern that recursed into nested values took about 4 s of nginx's one worker for 48 KB
      // nested 8,000 deep (time growing with the square of the depth); the shipped one walks a fixed
      // depth and answers each of these, a little under the buffer, at once.
      const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const member = '{"b":{"c":[1,"x",{"d":null}]}}';
      const bodies = {
        'arrays nested 60,000 deep': `{"params":{"arguments":{"a":${nested(60_000)},"slug":"${SLUGS[4]}"}}}`,
        'thousands of nested members and no slug': `{"params":{"arguments":{${Array.from({ length: 3_500 }, (_, i) => `"k${i}":${member}`).join(',')}}}}`,
        'params inside params': `{${'"params":{"arguments":{"a":1,'.repeat(4_000)}"x":1${'}}'.repeat(4_000)}}`,
      };
      for (const [what, body] of Object.entries(bodies)) {
        expect(body.length, what).toBeLessThan(150_000);
        const started = performance.now();
        await landing({ method: 'POST', path: '/mcp', body });
        const ms = performance.now() - started;
        console.log(`pattern cost: ${what} (${body.length} bytes) answered in ${ms.toFixed(0)} ms`);
        // Generous for a loaded machine; the quadratic pattern took minutes on bodies like these.
        expect(ms, what).toBeLessThan(5_000);
      }
    });

    it('MCP answers stream while the backend is still writing them (response buffering stays off)', async () => {
      const slug = SLUGS[3]!;
      const owner = await ownerOf(slug);
      for (const era of ['modern', 'legacy'] as const) {
        const response = await fetch(`${nginx.base}/mcp?sse`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: toolCall(era, 'wait', { slug, token: 't', wait_seconds: 30 }),
        });
        expect(response.headers.get('content-type')).toBe('text/event-stream');
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (!text.includes('\n\n')) text += decoder.decode((await reader.read()).value);
        // The first event arrived while the backend still holds the response open.
        expect(backends[owner]!.streams.size).toBe(1);
        expect(JSON.parse(text.split('data: ')[1]!.split('\n')[0]!).backend).toBe(owner);
        for (const release of backends[owner]!.streams) release();
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += decoder.decode(chunk.value);
        }
        expect(text).toContain('{"done":true}');
      }
    });

    it('a room whose backend is down goes to one other backend, and comes back when its own does', async () => {
      const slug = SLUGS[0]!;
      const owner = await landing({ method: 'GET', path: `/api/rooms/${slug}` });
      const down = backends[owner]!;
      await stopBackend(down);
      try {
        const seen = await landings(Array.from({ length: 3 }, () => roomRequests(slug)).flat());
        expect(seen).not.toContain(owner);
        expect(new Set(seen), `while down, ${slug} landed on ${seen.join(',')}`).toHaveLength(1);
      } finally {
        backends[owner] = await startBackend(owner, down.port);
      }
      // Once the backend answers again (nginx retries it after fail_timeout, 1 s), the room is home.
      await eventually(async () => (await landing({ method: 'GET', path: `/api/rooms/${slug}` })) === owner, 5_000);
    });
  },
);

const redis = hasNginx ? await startRedisServer() : null;

/** A counter of one process (conclave_http_requests_total by default), summed over the label sets `counts` selects. */
async function requestCount(
  base: string,
  counts: (labels: Record<string, string>) => boolean,
  metric = 'conclave_http_requests_total',
): Promise<number> {
  const text = await fetch(`${base}/metrics`).then(
    (response) => response.text(),
    () => '',
  );
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\d+)$`, 'gm'))) {
    const labels = Object.fromEntries(
      [...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1]!, label[2]!]),
    );
    if (counts(labels)) total += Number(match[2]);
  }
  return total;
}

const VISIT_REQUESTS = 4;
const MCP_VISIT_CALLS = 2;
const isRoomRoute = ({ route = '' }: Record<string, string>) =>
  route.startsWith('/api/rooms/:slug') || route === '/r/:slug';

describe.skipIf(!hasNginx || redis === null)('room affinity with three service processes on one Redis', () => {
  let fleet: Fleet;
  let nginx: Nginx;
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `affinity-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_CREDENTIAL_PER_MIN: '0',
    LOG_LEVEL: 'error',
  };
  const bases = () => fleet.ports.map((port) => `http://127.0.0.1:${port}`);

  /** Per process, how many requests the selected routes (or MCP tool calls) answered so far. */
  const counts = (select: (labels: Record<string, string>) => boolean, metric?: string) =>
    Promise.all(bases().map((base) => requestCount(base, select, metric)));

  /** Runs `work`, then returns how many of its `expected` requests each process answered. */
  async function shares(
    select: (labels: Record<string, string>) => boolean,
    expected: number,
    work: () => Promise<unknown>,
    metric?: string,
  ): Promise<number[]> {
    const before = await counts(select, metric);
    await work();
    let after = before;
    // A process counts a response once it is sent: read until every one of them is counted.
    await eventually(async () => {
      after = await counts(select, metric);
      return after.reduce((sum, n, i) => sum + n - before[i]!, 0) >= expected;
    }, 5_000);
    return after.map((n, i) => n - before[i]!);
  }

  /** A room's mix of reads and writes through nginx (VISIT_REQUESTS of them): read, events, the room page, join. */
  async function visit(room: { slug: string; creator_token: string }): Promise<void> {
    const auth = { authorization: `Bearer ${room.creator_token}` };
    const reads = [`/api/rooms/${room.slug}`, `/api/rooms/${room.slug}/events?limit=5`, `/r/${room.slug}`];
    for (const path of reads) {
      const response = await fetch(`${nginx.base}${path}`, { headers: auth });
      expect(response.status, path).toBe(200);
      await response.arrayBuffer();
    }
    await write(newLedger(), () => nginx.base, `/api/rooms/${room.slug}/join`, { display_name: 'visitor' });
  }

  /** One agent over MCP (the SDK's own client): joins and reads the room, MCP_VISIT_CALLS tool calls. */
  async function mcpVisit(room: { slug: string }, connect: (url: string) => Promise<McpSession>): Promise<void> {
    const session = await connect(`${nginx.base}/mcp`);
    try {
      const joined = await ok(session, 'join_room', { slug: room.slug, display_name: 'agent' });
      await ok(session, 'read_room', { slug: room.slug, token: joined.participant_token });
    } finally {
      await session.close();
    }
  }

  beforeAll(async () => {
    fleet = await startFleet(3, env);
    nginx = await startNginx(fleet.ports.map((port) => `127.0.0.1:${port}`));
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await fleet?.stop();
    await redis?.stop();
  });

  it('one room on one process, rooms over several, slug-less requests over all, and a kill -9 fails over', async () => {
    const ledger = newLedger();
    const rooms: { slug: string; creator_token: string }[] = [];
    const created = await shares(
      ({ method, route }) => method === 'POST' && route === '/api/rooms',
      12,
      async () => {
        for (let i = 0; i < 12; i++) {
          rooms.push(await write(ledger, () => nginx.base, '/api/rooms', { question: 'Where?', options: ['a', 'b'] }));
        }
      },
    );
    const discovery = await shares(
      ({ route }) => route === '/.well-known/svc.json',
      30,
      async () => {
        for (let i = 0; i < 30; i++) await (await fetch(`${nginx.base}/.well-known/svc.json`)).arrayBuffer();
      },
    );

    const owners: number[] = [];
    for (const room of rooms) {
      const share = await shares(isRoomRoute, 2 * VISIT_REQUESTS, async () => {
        await visit(room);
        await visit(room);
      });
      expect(
        share.filter((n) => n > 0),
        `room ${room.slug}: ${share.join('/')}`,
      ).toHaveLength(1);
      owners.push(share.findIndex((n) => n > 0));
    }
    // Agents of both eras in each room, over MCP: every tool call lands where the room's REST requests do.
    for (const [i, room] of rooms.entries()) {
      const share = await shares(
        () => true,
        2 * MCP_VISIT_CALLS,
        async () => {
          await mcpVisit(room, connectModern);
          await mcpVisit(room, connectLegacy);
        },
        'conclave_mcp_tool_calls_total',
      );
      expect(share, `room ${room.slug} (REST on ${owners[i]}): MCP tool calls per process ${share.join('/')}`).toEqual(
        [0, 1, 2].map((process) => (process === owners[i] ? 2 * MCP_VISIT_CALLS : 0)),
      );
    }
    const roomsPerProcess = [0, 1, 2].map((i) => owners.filter((owner) => owner === i).length);
    console.log(
      `affinity (service): rooms created per process ${created.join('/')}, discovery ${discovery.join('/')}, ` +
        `rooms owned per process ${roomsPerProcess.join('/')} (${rooms.map((room, i) => `${room.slug}→${owners[i]}`).join(' ')})`,
    );
    // Random slugs: all 12 on one process would happen once in 177,000 runs.
    expect(roomsPerProcess.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    expect(created.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    for (const n of discovery) expect(n).toBeGreaterThan(0);

    // kill -9 the process that owns the first room: its requests are served, all by one survivor.
    const room = rooms[0]!;
    const owner = owners[0]!;
    fleet.kill(owner);
    const failover = await shares(isRoomRoute, 2 * VISIT_REQUESTS, async () => {
      await visit(room);
      await visit(room);
    });
    expect(failover[owner]).toBe(0);
    expect(
      failover.filter((n) => n > 0),
      `after the kill: ${failover.join('/')}`,
    ).toHaveLength(1);

    // Restarted, the process takes its room back (nginx tries it again after fail_timeout, 1 s).
    await fleet.restart(owner);
    await eventually(async () => {
      const back = await shares(isRoomRoute, 1, async () => {
        await (
          await fetch(`${nginx.base}/api/rooms/${room.slug}`, {
            headers: { authorization: `Bearer ${room.creator_token}` },
          })
        ).arrayBuffer();
      });
      return back[owner] === 1;
    }, 10_000);
  }, 120_000);
});
