/**
 * Room affinity in the shipped nginx template (deploy/nginx/nginx.conf.template): every request
 * whose path names a room goes to one process while that process is up, different rooms spread over
 * the processes, requests that name no room spread evenly, and a room whose process is kill -9ed is
 * served by one other process until its own comes back. Correctness never rests on this (the Redis
 * lock and fencing do); what it buys is a busy room's state staying warm in one process.
 *
 * First against three tiny backends that say who they are (every path form the service has, exactly),
 * then against three real service processes on one Redis, each process's share read from its own
 * `GET /metrics`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { newLedger, write } from '../support/ledger.js';
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

interface Backend {
  port: number;
  server: Server;
}

/** A backend that answers every request with its own index: who nginx chose, nothing else. */
async function startBackend(index: number, port: number): Promise<Backend> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ backend: index }));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, server };
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

    async function landing(request: { method: string; path: string }): Promise<number> {
      const response = await fetch(`${nginx.base}${request.path}`, {
        method: request.method,
        ...(request.method === 'GET' ? {} : { body: '{}', headers: { 'content-type': 'application/json' } }),
      });
      expect(response.status, `${request.method} ${request.path}`).toBe(200);
      return ((await response.json()) as { backend: number }).backend;
    }

    async function landings(requests: { method: string; path: string }[]): Promise<number[]> {
      const out: number[] = [];
      for (const request of requests) out.push(await landing(request));
      return out;
    }

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

/** conclave_http_requests_total of one process, summed over the routes `counts` selects. */
async function requestCount(base: string, counts: (method: string, route: string) => boolean): Promise<number> {
  const text = await fetch(`${base}/metrics`).then(
    (response) => response.text(),
    () => '',
  );
  let total = 0;
  for (const match of text.matchAll(/^conclave_http_requests_total\{([^}]*)\} (\d+)$/gm)) {
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1], label[2]]));
    if (counts(labels.method ?? '', labels.route ?? '')) total += Number(match[2]);
  }
  return total;
}

const VISIT_REQUESTS = 4;
const isRoomRoute = (_method: string, route: string) => route.startsWith('/api/rooms/:slug') || route === '/r/:slug';

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

  /** Per process, how many requests the selected routes answered so far. */
  const counts = (select: (method: string, route: string) => boolean) =>
    Promise.all(bases().map((base) => requestCount(base, select)));

  /** Runs `work`, then returns how many of its `expected` requests each process answered. */
  async function shares(
    select: (method: string, route: string) => boolean,
    expected: number,
    work: () => Promise<unknown>,
  ): Promise<number[]> {
    const before = await counts(select);
    await work();
    let after = before;
    // A process counts a response once it is sent: read until every one of them is counted.
    await eventually(async () => {
      after = await counts(select);
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
      (method, route) => method === 'POST' && route === '/api/rooms',
      12,
      async () => {
        for (let i = 0; i < 12; i++) {
          rooms.push(await write(ledger, () => nginx.base, '/api/rooms', { question: 'Where?', options: ['a', 'b'] }));
        }
      },
    );
    const discovery = await shares(
      (_method, route) => route === '/.well-known/svc.json',
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
