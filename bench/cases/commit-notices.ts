/**
 * Commit notices per process, before and after per-room sharded channels (docs/architecture.md,
 * Engagement: commit notices), on one Redis and on a 3-master Cluster: 4 service processes, each
 * holding a for=activity long-poll on every room of its own quarter of 1,000 rooms; then one commit
 * in every room, made on another process than the one waiting. The services run with
 * COMMIT_NOTICES=both, so in the same run each process counts what the broadcast design sends it
 * (the `broadcast` channel: every commit of every room) beside what it hears on the rooms' own
 * channels (`room`). Broadcast notices of this version are flagged and never wake anyone, so every
 * wake counted comes from the sharded channels. Acceptance: each process hears at most a third of
 * what the broadcast sends it, and every parked long-poll is woken by its room's commit.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { startRedisCluster } from '../../test/support/redis-cluster.js';
import { startRedisServer } from '../../test/support/redis-server.js';
import { startBenchService } from '../bench-service.js';
import type { BenchCase, BenchRow } from '../table.js';

type Service = Awaited<ReturnType<typeof startBenchService>>;

export interface NoticeMeasure {
  /** Per process: notices the broadcast design delivers to it (before) and what it receives now (after). */
  processes: { before: number; after: number }[];
  parked: number;
  woken: number;
  /** Wall seconds from the first commit to the last wake. */
  seconds: number;
}

/** Requests in flight at once while rooms are made and written to. */
const CONCURRENCY = 16;

/** A POST as a client makes it: a 503 (Redis busy or moving slots) is tried again with the same key. */
async function post(base: string, path: string, token: string | undefined, body: unknown) {
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': key,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    const parsed = (await response.json()) as Record<string, any>;
    if (response.ok) return parsed;
    if (response.status !== 503 || attempt === 5) {
      throw new Error(`${path}: ${response.status} ${JSON.stringify(parsed)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

/** Runs `work(i)` for i in [0, count) with at most CONCURRENCY at once. */
async function inParallel(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `processes` services on `redisUrl`, each parking one long-poll on each room of its share of `rooms`,
 * then `commits` commits spread over all rooms (room i % rooms, made on the next process over).
 */
export async function measureNotices(options: {
  redisUrl: string;
  cluster: boolean;
  processes: number;
  rooms: number;
  commits: number;
}): Promise<NoticeMeasure> {
  const env = {
    STORE: 'redis',
    REDIS_URL: options.redisUrl,
    ...(options.cluster ? { REDIS_CLUSTER: 'true' } : {}),
    REDIS_KEY_PREFIX: `notices-${randomUUID().slice(0, 8)}:`,
    CONCLAVE_SIGNING_KEY_SEED: randomBytes(32).toString('hex'),
    COMMIT_NOTICES: 'both',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
  };
  const services: Service[] = [];
  try {
    for (let p = 0; p < options.processes; p++) services.push(await startBenchService(env));
    const owner = (room: number) => services[room % services.length]!;
    const rooms: { slug: string; waiter: string; writer: string }[] = [];
    await inParallel(options.rooms, async (i) => {
      const { base } = owner(i);
      const created = await post(base, '/api/rooms', undefined, { about: `Notices ${i}` });
      const joined = await post(base, `/api/rooms/${created.slug}/join`, undefined, { display_name: 'writer' });
      rooms[i] = { slug: created.slug, waiter: created.creator_token, writer: joined.participant_token };
    });
    // Each room's long-poll parks on the process that owns the room's quarter.
    let woken = 0;
    const polls = rooms.map(async (room, i) => {
      const response = await fetch(`${owner(i).base}/api/rooms/${room.slug}/next-action?for=activity&wait=120`, {
        headers: { authorization: `Bearer ${room.waiter}` },
      });
      const body = (await response.json()) as { status?: string };
      if (body.status === 'activity') woken++;
    });
    const parkedNow = () => services.reduce((sum, s) => sum + s.service.engagement.waiters.parked, 0);
    await until(() => parkedNow() === rooms.length, 60_000, 'every long-poll parking');
    // Count from a quiet start: every process subscribed to its rooms, and the set-up's notices heard.
    const subscribed = (s: Service) => s.service.engagement.notices?.rooms.subscribed ?? 0;
    await until(
      () => services.every((s, p) => subscribed(s) === rooms.filter((_, i) => i % services.length === p).length),
      60_000,
      'every subscription confirmed',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const start = services.map((s) => ({ ...s.service.engagement.noticesReceived }));
    const startedAt = performance.now();
    await inParallel(options.commits, async (c) => {
      const i = c % rooms.length;
      const writer = services[(i + 1) % services.length]!;
      await post(writer.base, `/api/rooms/${rooms[i]!.slug}/discuss`, rooms[i]!.writer, { body: `commit ${c}` });
    });
    await Promise.all(polls);
    const seconds = (performance.now() - startedAt) / 1000;
    // Notices trail the commits a little: let the last ones arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return {
      processes: services.map((s, p) => ({
        before: s.service.engagement.noticesReceived.broadcast - start[p]!.broadcast,
        after: s.service.engagement.noticesReceived.room - start[p]!.room,
      })),
      parked: rooms.length,
      woken,
      seconds,
    };
  } finally {
    for (const { service, dataDir } of services) {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}

const PROCESSES = 4;
const ROOMS = Number(process.env.BENCH_NOTICE_ROOMS ?? 1000);

function rowsOf(topology: string, measure: NoticeMeasure): BenchRow[] {
  const rows: BenchRow[] = measure.processes.map(({ before, after }, p) => ({
    case: `commit notices, ${topology}: process ${p + 1}`,
    ratio: before > 0 ? after / before : undefined,
    note: `received ${after} on its rooms' channels vs ${before} from the broadcast (before); ratio = after / before, accept <= 0.33`,
  }));
  rows.push({
    case: `commit notices, ${topology}: long-polls woken`,
    ratio: measure.woken / measure.parked,
    note: `${measure.woken} / ${measure.parked} woken by their room's commit, ${ROOMS} commits in ${measure.seconds.toFixed(1)} s`,
    errors: measure.parked - measure.woken,
  });
  return rows;
}

export const commitNotices: BenchCase = {
  id: 'commit-notices',
  async run() {
    const rows: BenchRow[] = [];
    const server = await startRedisServer();
    if (server === null) return [{ case: 'commit notices', note: 'skipped: no redis-server' }];
    try {
      const measure = await measureNotices({
        redisUrl: server.url,
        cluster: false,
        processes: PROCESSES,
        rooms: ROOMS,
        commits: ROOMS,
      });
      rows.push(...rowsOf('one Redis', measure));
    } finally {
      await server.stop();
    }
    const cluster = await startRedisCluster();
    if (cluster === null) return [...rows, { case: 'commit notices, Cluster', note: 'skipped: no redis-cli' }];
    try {
      // Replicas still joining change the slot map ioredis reads, which upsets its auto-pipelines.
      await cluster.healthy();
      const measure = await measureNotices({
        redisUrl: cluster.url,
        cluster: true,
        processes: PROCESSES,
        rooms: ROOMS,
        commits: ROOMS,
      });
      rows.push(...rowsOf('3-master Cluster', measure));
    } finally {
      await cluster.stop();
    }
    return rows;
  },
};
