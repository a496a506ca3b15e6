/**
 * Attack: one client address takes the process's memory and the disk with big rooms (issue
 * "Hostile parties", Memory and disk). Before: the room cache held 1,000 actors whatever their size,
 * a room could hold 8 options of 500,000 characters (~8 MiB resident each), 100 of them grew the
 * process by ~825 MiB and ~510 killed it; one address could create rooms as fast as the per-IP
 * request limit let it. After: the cache is bounded in bytes, one decision's options hold at most
 * 500,000 characters together, and rooms created per address per hour are limited.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEXT_LIMITS } from '../../src/domain/config.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { type ChildService, spawnService } from '../support/child-service.js';
import { connectModern } from '../support/mcp-clients.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';

const MiB = 1024 * 1024;

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!kib) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib[1]) * 1024;
}

/** `length` characters of `char`, marked at the front so texts stay distinct. */
function text(mark: string, char: string, length: number): string {
  return mark + char.repeat(length - mark.length);
}

/** The largest decision one ask can open: the protocol's full question and context, the options' total. */
function largestAsk(mark: string): Record<string, unknown> {
  return {
    question: text(`${mark}:`, '語', TEXT_LIMITS.question),
    context: text(`${mark}:`, '語', TEXT_LIMITS.context),
    options: [text(`${mark}.1:`, '語', TEXT_LIMITS.optionsPerDecision - 2), 'no'],
  };
}

/**
 * Room bodies from the largest the service might accept downwards. The first is the room of the
 * issue (8 options of 500,000 ASCII characters: just under the 4 MiB body limit). The second is the
 * largest under this service's limits, in characters V8 keeps at two bytes each (and UTF-8 at three,
 * still under the body limit): the most memory one room can be given at creation.
 */
function candidates(n: number): { name: string; body: Record<string, unknown> }[] {
  return [
    {
      name: '8 options of 500,000 ASCII characters',
      body: {
        question: `Which plan ${n}?`,
        about: text(`${n}:`, 'a', 90_000),
        options: Array.from({ length: 8 }, (_, i) => text(`${n}.${i}:`, 'a', 500_000)),
      },
    },
    {
      name: 'the text limits, two-byte characters',
      body: { ...largestAsk(`${n}`), about: text(`${n}:`, '語', TEXT_LIMITS.about) },
    },
  ];
}

/**
 * A service process of its own for one attack (its RSS is the measure). The creation limit is raised
 * so every creation reaches the memory bound under test; the default limit is exercised below.
 */
function attackedService(): () => ChildService {
  let svc: ChildService | undefined;
  beforeAll(async () => {
    svc = await spawnService({ RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_CREATE_PER_HOUR: '1000' }, { capture: true });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });
  return () => svc!;
}

describe('100 of the largest rooms from one address', () => {
  const service = attackedService();

  it('keeps the process up and its RSS growth under 400 MiB', async () => {
    const svc = service();
    const pid = svc.child.pid!;
    // Warm up the routes the attack uses, so the baseline includes the service's own working set.
    for (let i = 0; i < 5; i++) {
      const warm = await call(svc.base, 'POST', '/api/rooms', { body: { question: 'Warm up?', options: ['a', 'b'] } });
      expect(warm.status).toBe(200);
      const read = await call(svc.base, 'GET', `/api/rooms/${warm.body.slug}`, { token: warm.body.creator_token });
      expect(read.status).toBe(200);
    }
    const baseline = rssBytes(pid);

    // The largest room the service accepts: the first candidate it does not refuse.
    let shape = -1;
    const rooms: { slug: string; creator_token: string }[] = [];
    for (const [index, candidate] of candidates(0).entries()) {
      const res = await call(svc.base, 'POST', '/api/rooms', { body: candidate.body });
      if (res.status === 200) {
        shape = index;
        rooms.push(res.body);
        break;
      }
      // A refused shape is refused with a teaching 400, never a 5xx.
      expect(res.status, `${candidate.name}: ${res.text.slice(0, 300)}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'input.invalid', details: { field: 'options' } });
    }
    expect(shape, 'the service accepts no candidate room').toBeGreaterThanOrEqual(0);
    // The room of the issue is refused: one decision's options hold at most 500,000 characters.
    expect(candidates(0)[shape]!.name).toBe('the text limits, two-byte characters');

    let peak = rssBytes(pid);
    for (let n = 1; n < 100; n++) {
      const res = await call(svc.base, 'POST', '/api/rooms', { body: candidates(n)[shape]!.body });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      rooms.push(res.body);
      peak = Math.max(peak, rssBytes(pid));
    }
    // Rooms evicted from the cache reload from the store, whole.
    for (const { slug, creator_token } of [rooms[0]!, rooms[50]!, rooms[99]!]) {
      const room = await call(svc.base, 'GET', `/api/rooms/${slug}?include=full`, { token: creator_token });
      expect(room.status).toBe(200);
      expect(room.text.length).toBeGreaterThan(TEXT_LIMITS.optionsPerDecision + TEXT_LIMITS.about);
      peak = Math.max(peak, rssBytes(pid));
    }
    expect(svc.child.exitCode).toBeNull();
    expect((await call(svc.base, 'GET', '/healthz')).status).toBe(200);
    const growth = peak - baseline;
    console.info(`RSS baseline ${(baseline / MiB).toFixed(0)} MiB, peak growth ${(growth / MiB).toFixed(0)} MiB`);
    expect(growth).toBeLessThanOrEqual(400 * MiB);
  }, 300_000);
});

describe('rooms grown after creation, from one address', () => {
  const service = attackedService();

  // Each room takes five open decisions of the largest size (~3 million characters, ~12 MiB as the
  // cache weighs it): 40 of them held by a cache bounded only in count would take ~460 MiB.
  it('keeps the RSS growth under 400 MiB: the cache evicts by weight', async () => {
    const svc = service();
    const pid = svc.child.pid!;
    const warm = await call(svc.base, 'POST', '/api/rooms', { body: { question: 'Warm up?', options: ['a', 'b'] } });
    expect(warm.status).toBe(200);
    const baseline = rssBytes(pid);
    let peak = baseline;
    const rooms: { slug: string; creator_token: string }[] = [];
    for (let n = 0; n < 40; n++) {
      const created = await call(svc.base, 'POST', '/api/rooms', {
        body: { ...largestAsk(`${n}`), config: { max_open_decisions: 5 } },
      });
      expect(created.status, created.text.slice(0, 300)).toBe(200);
      rooms.push(created.body);
      for (let d = 1; d < 5; d++) {
        const asked = await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/ask`, {
          token: created.body.creator_token,
          body: largestAsk(`${n}/${d}`),
        });
        expect(asked.status, asked.text.slice(0, 300)).toBe(200);
      }
      peak = Math.max(peak, rssBytes(pid));
    }
    // The first room was evicted long ago; it reloads with its five decisions.
    const first = await call(svc.base, 'GET', `/api/rooms/${rooms[0]!.slug}?include=full`, {
      token: rooms[0]!.creator_token,
    });
    expect(first.status).toBe(200);
    expect(first.text.length).toBeGreaterThan(5 * TEXT_LIMITS.optionsPerDecision);
    expect(svc.child.exitCode).toBeNull();
    const growth = Math.max(peak, rssBytes(pid)) - baseline;
    console.info(
      `grown rooms: RSS baseline ${(baseline / MiB).toFixed(0)} MiB, peak growth ${(growth / MiB).toFixed(0)} MiB`,
    );
    expect(growth).toBeLessThanOrEqual(400 * MiB);
  }, 300_000);
});

describe('the cache weighs rooms (in process)', () => {
  const budget = 8 * MiB;
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { ROOM_CACHE_BYTES: String(budget) } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('holds the cached weight under ROOM_CACHE_BYTES; evicted rooms reload whole and keep working', async () => {
    const { registry } = svc.service.services;
    const rooms: { slug: string; creator_token: string }[] = [];
    for (let n = 0; n < 10; n++) {
      const created = await call(svc.base, 'POST', '/api/rooms', { body: largestAsk(`${n}`) });
      expect(created.status).toBe(200);
      rooms.push(created.body);
      expect(registry.cachedBytes).toBeLessThanOrEqual(budget);
    }
    // ~600,000 characters weigh ~2.4 MiB: three fit in 8 MiB, not ten.
    expect(registry.cachedRooms).toBeGreaterThan(0);
    expect(registry.cachedRooms).toBeLessThan(10);
    for (const room of rooms) {
      const read = await call(svc.base, 'GET', `/api/rooms/${room.slug}?include=full`, { token: room.creator_token });
      expect(read.status).toBe(200);
      expect(read.text.length).toBeGreaterThan(TEXT_LIMITS.optionsPerDecision);
      const said = await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, {
        token: room.creator_token,
        body: { body: 'still here' },
      });
      expect(said.status).toBe(200);
      expect(registry.cachedBytes).toBeLessThanOrEqual(budget);
    }
  });

  it('serves a room heavier than the whole budget from the store, read after write', async () => {
    const tiny = await startService({ env: { ROOM_CACHE_BYTES: String(MiB) } });
    try {
      const created = await call(tiny.base, 'POST', '/api/rooms', {
        body: { ...largestAsk('heavy'), config: { max_open_decisions: 2 } },
      });
      expect(created.status).toBe(200);
      const { slug, creator_token: token } = created.body;
      const { registry } = tiny.service.services;
      expect(registry.cachedRooms).toBe(0);
      // Concurrent writes and reads on a room that never stays cached: each sees the one before.
      const writes = await Promise.all([
        call(tiny.base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body: 'one' } }),
        call(tiny.base, 'GET', `/api/rooms/${slug}`, { token }),
        call(tiny.base, 'POST', `/api/rooms/${slug}/ask`, {
          token,
          body: { question: 'Second?', options: ['x', 'y'] },
        }),
        call(tiny.base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body: 'two' } }),
      ]);
      expect(writes.map((w) => w.status)).toEqual([200, 200, 200, 200]);
      const full = await call(tiny.base, 'GET', `/api/rooms/${slug}?include=full`, { token });
      expect(full.body.decisions ?? full.body.decisions_open).toBeDefined();
      expect(full.text).toContain('Second?');
      expect(full.text).toContain('two');
      expect(registry.cachedRooms).toBe(0);
      expect(registry.cachedBytes).toBe(0);
    } finally {
      await tiny.stop();
    }
  });
});

describe('the options of one decision hold 500,000 characters together', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('on create, ask and propose, with a teaching 400', async () => {
    const { base } = svc;
    const half = (mark: string) => text(mark, 'o', TEXT_LIMITS.optionsPerDecision / 2);
    const over = await call(base, 'POST', '/api/rooms', {
      body: { question: 'Too much?', options: [half('a'), half('b'), 'c'] },
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({
      code: 'input.invalid',
      details: { field: 'options', reason: 'out_of_range', limit: 500_000, total: 500_001 },
    });
    expect(over.body.error.message).toMatch(/500000 characters together/);

    const room = await call(base, 'POST', '/api/rooms', {
      body: { question: 'Just enough?', options: [half('a'), half('b')], config: { max_open_decisions: 2 } },
    });
    expect(room.status).toBe(200);
    const token = room.body.creator_token;
    const proposed = await call(base, 'POST', `/api/rooms/${room.body.slug}/options`, { token, body: { option: 'c' } });
    expect(proposed.status).toBe(400);
    expect(proposed.body.error.details).toMatchObject({ field: 'option', reason: 'out_of_range', total: 500_001 });

    const asked = await call(base, 'POST', `/api/rooms/${room.body.slug}/ask`, {
      token,
      body: { question: 'Again?', options: [half('x'), half('y'), 'z'] },
    });
    expect(asked.status).toBe(400);
    expect(asked.body.error.details).toMatchObject({ field: 'options', reason: 'out_of_range' });
  });
});

/** A JSON call from another loopback address (127.0.0.2 is as much the loopback as 127.0.0.1). */
async function callFrom(localAddress: string, base: string, body: unknown) {
  const dispatcher = new Agent({ localAddress });
  try {
    const res = await undiciFetch(`${base}/api/rooms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher,
    });
    return { status: res.status, body: (await res.json()) as any };
  } finally {
    await dispatcher.close();
  }
}

function expectCreationLimited(res: { status: number; body: any; headers: Headers }, limit: number, retry: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe(String(retry));
  expect(res.body.error).toMatchObject({
    code: 'rate_limit.exceeded',
    details: { scope: 'ip', limit, window_seconds: 3600, retry_after_seconds: retry },
  });
  expect(res.body.error.message).toMatch(/create 3 rooms per hour/);
}

describe('rooms created per address per hour', () => {
  let svc: RunningService;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    svc = await startService({ clock, env: { RATE_LIMIT_CREATE_PER_HOUR: '3' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('answers 429 with Retry-After past the limit, on REST and MCP; another address still creates', async () => {
    const { base } = svc;
    // Refused input is not counted.
    expect((await call(base, 'POST', '/api/rooms', { body: { options: ['a'] } })).status).toBe(400);
    expect((await call(base, 'POST', '/api/rooms', { body: { about: 'one' } })).status).toBe(200);
    clock.advance(600_000);
    expect((await call(base, 'POST', '/api/rooms', { body: { about: 'two' } })).status).toBe(200);
    expect((await call(base, 'POST', '/api/rooms', { body: { about: 'three' } })).status).toBe(200);

    // The first creation leaves the window 3,000 s from now.
    expectCreationLimited(await call(base, 'POST', '/api/rooms', { body: { about: 'four' } }), 3, 3000);
    const mcp = await connectModern(`${base}/mcp/host`);
    try {
      const outcome = await mcp.call('create_room', { about: 'four, over MCP' });
      expect(outcome.isError).toBe(true);
      expect(outcome.body.error).toMatchObject({ code: 'rate_limit.exceeded', details: { scope: 'ip', limit: 3 } });
    } finally {
      await mcp.close();
    }

    // Another client address is not affected.
    const other = await callFrom('127.0.0.2', base, { about: 'elsewhere' });
    expect(other.status).toBe(200);
    expect(typeof other.body.slug).toBe('string');

    clock.advance(3_000_000);
    expect((await call(base, 'POST', '/api/rooms', { body: { about: 'an hour later' } })).status).toBe(200);
  });
});

describe('the default limit', () => {
  it('stops one address at 30 rooms an hour', async () => {
    // Unset: the configuration's default applies.
    const svc = await startService({ env: { RATE_LIMIT_CREATE_PER_HOUR: undefined as unknown as string } });
    try {
      const answers = [];
      for (let i = 0; i < 31; i++)
        answers.push((await call(svc.base, 'POST', '/api/rooms', { body: { about: `r${i}` } })).status);
      expect(answers.slice(0, 30).every((status) => status === 200)).toBe(true);
      expect(answers[30]).toBe(429);
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
  it('holds the creation limit across two processes', async () => {
    const clock = new ManualClock(Date.now());
    const env = {
      STORE: 'redis',
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `adv-${randomUUID().slice(0, 8)}:`,
      RATE_LIMIT_CREATE_PER_HOUR: '2',
    };
    const one = await startService({ clock, env });
    const two = await startService({ clock, env });
    try {
      expect((await call(one.base, 'POST', '/api/rooms', { body: { about: 'one' } })).status).toBe(200);
      expect((await call(two.base, 'POST', '/api/rooms', { body: { about: 'two' } })).status).toBe(200);
      const refused = await call(one.base, 'POST', '/api/rooms', { body: { about: 'three' } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3600');
      expect((await callFrom('127.0.0.2', two.base, { about: 'elsewhere' })).status).toBe(200);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
