/**
 * Who the client is, through the shipped nginx template and three processes on Redis
 * (docs/operators.md, Behind a proxy): clients are told apart by the loopback address their socket
 * comes from (127.0.0.N), as nginx sees them, never by a header they write.
 * - A made-up X-Forwarded-For changes nothing a client is counted as: 40 creations give 30 rooms
 *   and then 429; wrong passwords sent "as" another address count on the sender's own address, and
 *   the address it named gets in with the right password.
 * - One address opening event streams until nginx refuses it leaves every other client's /healthz,
 *   room read and long-poll served: nginx caps a client's connections below its own capacity, and
 *   holds the replicas' whole parking pools besides (deploy/nginx/nginx.conf.template).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HeldStream, openStreamFrom, requestFrom } from '../support/from-address.js';
import { startRedisServer } from '../support/redis-server.js';
import { type Fleet, hasNginx, type Nginx, startFleet, startNginx } from '../support/topology.js';

const PASSWORD = 'the right password';
/** nginx's own address as the replicas see it: the one proxy they trust (docker-compose.yml names its address the same way). */
const NGINX_ADDRESS = '127.0.0.1';

const redis = hasNginx ? await startRedisServer() : null;

describe.skipIf(!hasNginx || redis === null)('the client address through nginx and three processes on Redis', () => {
  let fleet: Fleet;
  let nginx: Nginx;
  const env = {
    STORE: 'redis',
    REDIS_URL: redis?.url ?? '',
    REDIS_KEY_PREFIX: `client-address-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    TRUST_PROXY: NGINX_ADDRESS,
    // The stream test opens a few thousand streams from one address within seconds: the per-minute
    // request limit would stop it long before nginx's own caps are reached, which are what is tested.
    RATE_LIMIT_IP_PER_MIN: '0',
    LOG_LEVEL: 'error',
  };

  beforeAll(async () => {
    fleet = await startFleet(3, env);
    nginx = await startNginx(fleet.ports.map((port) => `127.0.0.1:${port}`));
  }, 180_000);
  afterAll(async () => {
    await nginx?.stop();
    await fleet?.stop();
    await redis?.stop();
  });

  it('40 creations, each with a made-up X-Forwarded-For, from one address: 30 rooms, then 429', async () => {
    const statuses: number[] = [];
    let refusal: any = null;
    for (let i = 0; i < 40; i++) {
      const answer = await requestFrom('127.0.0.10', `${nginx.base}/api/rooms`, {
        method: 'POST',
        headers: { 'x-forwarded-for': `198.51.100.${i + 1}`, 'x-real-ip': `198.51.100.${i + 1}` },
        body: { question: `Which ${i}?`, options: ['a', 'b'] },
      });
      statuses.push(answer.status);
      if (answer.status === 429) refusal ??= answer;
    }
    expect(statuses).toEqual([...Array(30).fill(200), ...Array(10).fill(429)]);
    expect(refusal.body.error.code).toBe('rate_limit.exceeded');
    expect(refusal.body.error.details).toMatchObject({ scope: 'ip', limit: 30, window_seconds: 3600 });
    expect(Number(refusal.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another address still creates: the count was the sender's, not everyone's.
    const other = await requestFrom('127.0.0.13', `${nginx.base}/api/rooms`, {
      method: 'POST',
      body: { question: 'Mine?', options: ['a', 'b'] },
    });
    expect(other.status).toBe(200);
  });

  it('6 wrong passwords sent "as" another address count on the sender: the named address gets in', async () => {
    const victim = '127.0.0.12';
    const attacker = '127.0.0.11';
    const created = await requestFrom(victim, `${nginx.base}/api/rooms`, {
      method: 'POST',
      body: { question: 'Private?', options: ['a', 'b'], password: PASSWORD },
    });
    expect(created.status).toBe(200);
    const slug = created.body.slug as string;

    const guesses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await requestFrom(attacker, `${nginx.base}/api/rooms/${slug}`, {
        headers: { 'x-forwarded-for': victim, 'x-room-password': `wrong ${i}` },
      });
      guesses.push(answer.status);
    }
    // The attacker's own address is held after five: the header named nobody.
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);

    const read = await requestFrom(victim, `${nginx.base}/api/rooms/${slug}`, {
      headers: { 'x-room-password': PASSWORD },
    });
    expect(read.status).toBe(200);
    const join = await requestFrom(victim, `${nginx.base}/api/rooms/${slug}/join`, {
      method: 'POST',
      body: { password: PASSWORD, display_name: 'rightful' },
    });
    expect(join.status).toBe(200);
  }, 60_000);

  it('one address opening event streams until nginx refuses it leaves every other client served', async () => {
    const attacker = '127.0.0.20';
    const bystander = '127.0.0.30';
    // Rooms spread over the three processes by nginx's hash of their slugs.
    const rooms: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await requestFrom(bystander, `${nginx.base}/api/rooms`, {
        method: 'POST',
        body: { question: `Stream ${i}?`, options: ['a', 'b'], config: { visibility: 'public' } },
      });
      expect(created.status).toBe(200);
      rooms.push(created.body.slug);
    }
    const joined = await requestFrom(bystander, `${nginx.base}/api/rooms/${rooms[0]}/join`, {
      method: 'POST',
      body: { display_name: 'bystander' },
    });
    expect(joined.status).toBe(200);
    const token = joined.body.participant_token as string;

    /** What another client does while the attacker holds its streams: every one must be answered. */
    const served = (): Promise<number[]> => {
      const status = (answer: Promise<{ status: number }>) => answer.then((a) => a.status).catch(() => -1);
      return Promise.all([
        status(requestFrom(bystander, `${nginx.base}/healthz`)),
        status(requestFrom(bystander, `${nginx.base}/api/rooms/${rooms[1]}`)),
        status(
          requestFrom(bystander, `${nginx.base}/api/rooms/${rooms[0]}/next-action?wait=1`, {
            headers: { authorization: `Bearer ${token}` },
          }),
        ),
      ]);
    };

    const held: HeldStream[] = [];
    let refused: number | string | null = null;
    const checks: number[][] = [];
    try {
      // Up to 2,600 attempts in batches of 50, more than the old template's ~2,050 proxied streams.
      for (let batch = 0; batch < 52 && refused === null; batch++) {
        const opened = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            openStreamFrom(
              attacker,
              `${nginx.base}/api/rooms/${rooms[(batch * 50 + i) % rooms.length]}/events/stream`,
            ).catch((error: NodeJS.ErrnoException) => error.code ?? 'error'),
          ),
        );
        for (const stream of opened) {
          if (typeof stream === 'string') refused ??= stream;
          else if (stream.status !== 200) {
            refused ??= stream.status;
            stream.close();
          } else held.push(stream);
        }
        if (batch % 8 === 7) checks.push(await served());
      }
      checks.push(await served());
      console.log(
        `streams held by one address: ${held.length}; first refusal: ${refused}; other client's answers: ${JSON.stringify(checks)}`,
      );
      // nginx said no, with a status: the attacker was refused, not the proxy run out of connections.
      expect(refused).toBe(429);
      const refusal = await requestFrom(attacker, `${nginx.base}/api/rooms/${rooms[0]}/events/stream`);
      expect(refusal.status).toBe(429);
      expect(refusal.headers['retry-after']).toBe('1');
      expect(refusal.body.error).toMatchObject({ code: 'rate_limit.exceeded', details: { scope: 'ip', limit: 384 } });
      // Its other calls still go through: its streams took 384 of its 512.
      expect((await requestFrom(attacker, `${nginx.base}/api/rooms/${rooms[1]}`)).status).toBe(200);
      for (const check of checks) expect(check).toEqual([200, 200, 200]);
    } finally {
      for (const stream of held) stream.close();
    }
  }, 180_000);
});
