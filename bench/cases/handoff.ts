/**
 * One room's writes spread over several Redis-backed processes (what round robin does to requests the
 * load balancer cannot route by room, e.g. MCP bodies), beside the same writes on one process, in
 * the same run: per-write latency and the Redis commands each write sends (MONITOR, commands run
 * inside a script not counted). Sequential writes show the handoff's own cost; concurrent agents
 * show contention for the room lock (docs/architecture.md, "One room, many processes").
 */
import { rm } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { startRedisServer } from '../../test/support/redis-server.js';
import { createBenchRoom, startBenchService } from '../bench-service.js';
import type { BenchCase, BenchRow } from '../table.js';

const PROCESSES = 3;
const SEQUENTIAL_WRITES = 300;
const AGENTS = 20;
const WRITES_PER_AGENT = 15;

type Service = Awaited<ReturnType<typeof startBenchService>>;

async function post(base: string, path: string, token: string | undefined, body: unknown) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, any> };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Counts the commands clients send (not those a script runs) while `work` runs. */
async function counted<T>(url: string, work: () => Promise<T>): Promise<{ result: T; commands: Map<string, number> }> {
  const redis = new Redis(url);
  const monitor = await redis.monitor();
  const commands = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source.includes('lua')) return;
    const name = String(args[0]).toLowerCase();
    commands.set(name, (commands.get(name) ?? 0) + 1);
  });
  try {
    const result = await work();
    // MONITOR's stream trails the commands themselves a little.
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { result, commands };
  } finally {
    monitor.disconnect();
    redis.disconnect();
  }
}

/** Summed over the processes: room lock waits (seconds, count) and batches, from /metrics. */
async function lockFigures(services: Service[]): Promise<{ waitSeconds: number; locks: number; batches: number }> {
  const total = { waitSeconds: 0, locks: 0, batches: 0 };
  for (const { base } of services) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    total.waitSeconds += value('conclave_room_lock_wait_seconds_sum');
    total.locks += value('conclave_room_lock_wait_seconds_count');
    total.batches += value('conclave_room_batch_turns_count');
  }
  return total;
}

interface Figures {
  p50: number;
  p99: number;
  errors: number;
  writes: number;
  commands: Map<string, number>;
  batches: number;
  /** Mean wait for the room lock per acquisition. */
  lockWaitMs: number;
}

async function run(
  url: string,
  services: Service[],
  label: string,
  write: (slug: string, tokens: string[]) => Promise<{ latencies: number[]; errors: number }>,
): Promise<Figures> {
  const room = await createBenchRoom(services[0]!.base, { type: 'persistent' });
  const tokens = [room.token];
  for (let i = 1; i < AGENTS; i++) {
    const joined = await post(services[i % services.length]!.base, `/api/rooms/${room.slug}/join`, undefined, {
      display_name: `${label} ${i}`,
    });
    tokens.push(joined.body.participant_token as string);
  }
  const before = await lockFigures(services);
  const { result, commands } = await counted(url, () => write(room.slug, tokens));
  const after = await lockFigures(services);
  const sorted = [...result.latencies].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: result.errors,
    writes: result.latencies.length,
    commands,
    batches: after.batches - before.batches,
    lockWaitMs: (1000 * (after.waitSeconds - before.waitSeconds)) / Math.max(1, after.locks - before.locks),
  };
}

/** One write at a time, the i-th on process `pick(i)`. */
function sequential(services: Service[], pick: (i: number) => number) {
  return async (slug: string, tokens: string[]) => {
    const latencies: number[] = [];
    let errors = 0;
    for (let i = 0; i < SEQUENTIAL_WRITES; i++) {
      const started = performance.now();
      const answer = await post(services[pick(i)]!.base, `/api/rooms/${slug}/discuss`, tokens[i % tokens.length], {
        body: `message ${i}`,
      });
      latencies.push(performance.now() - started);
      if (answer.status !== 200) errors++;
    }
    return { latencies, errors };
  };
}

/** Every agent writes at once, one write after another, each on process `pick(agent, i)`. */
function concurrent(services: Service[], pick: (agent: number, i: number) => number) {
  return async (slug: string, tokens: string[]) => {
    const latencies: number[] = [];
    let errors = 0;
    await Promise.all(
      tokens.map(async (token, agent) => {
        for (let i = 0; i < WRITES_PER_AGENT; i++) {
          const started = performance.now();
          const answer = await post(services[pick(agent, i)]!.base, `/api/rooms/${slug}/discuss`, token, {
            body: `agent ${agent} message ${i}`,
          });
          latencies.push(performance.now() - started);
          if (answer.status !== 200) errors++;
        }
      }),
    );
    return { latencies, errors };
  };
}

function row(name: string, figures: Figures, baseline?: Figures): BenchRow {
  const total = [...figures.commands.values()].reduce((sum, n) => sum + n, 0);
  const top = [...figures.commands.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([command, n]) => `${command} ${(n / figures.writes).toFixed(2)}`)
    .join(', ');
  return {
    case: name,
    p50: figures.p50,
    p99: figures.p99,
    errors: figures.errors,
    ...(baseline ? { ratio: figures.p50 / baseline.p50 } : {}),
    note: `${(figures.writes / Math.max(1, figures.batches)).toFixed(1)} writes per batch, lock wait ${figures.lockWaitMs.toFixed(1)} ms per batch; ${(total / figures.writes).toFixed(2)} Redis commands per write (${top})${baseline ? '; ratio = p50 / one-process p50' : ''}`,
  };
}

export const handoff: BenchCase = {
  id: 'handoff',
  async run() {
    const server = await startRedisServer();
    if (server === null) return [{ case: 'one room over several processes', note: 'skipped: no redis-server' }];
    const services: Service[] = [];
    try {
      for (let i = 0; i < PROCESSES; i++) {
        services.push(await startBenchService({ STORE: 'redis', REDIS_URL: server.url }));
      }
      const oneSeq = await run(
        server.url,
        services,
        'one',
        sequential(services, () => 0),
      );
      const manySeq = await run(
        server.url,
        services,
        'many',
        sequential(services, (i) => i % PROCESSES),
      );
      const oneConc = await run(
        server.url,
        services,
        'one',
        concurrent(services, () => 0),
      );
      const manyConc = await run(
        server.url,
        services,
        'many',
        concurrent(services, (agent, i) => (agent + i) % PROCESSES),
      );
      return [
        row(`one room, ${SEQUENTIAL_WRITES} writes in turn, one process`, oneSeq),
        row(`one room, ${SEQUENTIAL_WRITES} writes in turn, round robin over ${PROCESSES}`, manySeq, oneSeq),
        row(`one room, ${AGENTS} agents × ${WRITES_PER_AGENT} writes at once, one process`, oneConc),
        row(
          `one room, ${AGENTS} agents × ${WRITES_PER_AGENT} at once, round robin over ${PROCESSES}`,
          manyConc,
          oneConc,
        ),
      ];
    } finally {
      for (const { service, dataDir } of services) {
        await service.close();
        await rm(dataDir, { recursive: true, force: true });
      }
      await server.stop();
    }
  },
};
