/**
 * Parks 10,000 long-polls on one service process, wakes them all with one commit, and reports the
 * wake latency percentiles and the process's memory. Loopback only, bounded in time.
 *   npx tsx bench/long-poll-10k.ts            (BENCH_WAITERS=10000 by default)
 *
 * This process runs the service (so its memory is the service's); a forked child process holds the
 * 10,000 client connections. Every waiter is `for=completion` on one room; the deciding choice seals
 * the decision, and each waiter's latency is its answer's arrival minus the commit instant.
 */
import { startBenchService } from './bench-service.js';
import { fork } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const WAITERS = Number(process.env.BENCH_WAITERS ?? 10_000);
const PARK_TIMEOUT_MS = 120_000;
const BATCH = 250;

/** Wall-clock milliseconds with sub-millisecond precision, comparable between processes. */
const preciseNow = () => performance.timeOrigin + performance.now();

interface ClientReport {
  arrivals: number[];
  statuses: Record<string, number>;
  retried: number;
}

if (process.env.BENCH_ROLE === 'client') {
  await runClient();
} else {
  await runBench();
}

async function runClient(): Promise<void> {
  const base = process.env.BENCH_BASE!;
  const slug = process.env.BENCH_SLUG!;
  const token = process.env.BENCH_TOKEN!;
  const pool = new Pool(base, {
    connections: WAITERS,
    pipelining: 1,
    keepAliveTimeout: 120_000,
    headersTimeout: 120_000,
  });
  const report: ClientReport = { arrivals: [], statuses: {}, retried: 0 };
  const one = async (): Promise<void> => {
    for (;;) {
      try {
        const response = await pool.request({
          method: 'GET',
          path: `/api/rooms/${slug}/next-action?for=completion&wait=50`,
          headers: { authorization: `Bearer ${token}` },
        });
        const body = (await response.body.json()) as { status?: string };
        if (response.statusCode === 503) {
          report.retried++;
          await sleep(100);
          continue;
        }
        report.arrivals.push(preciseNow());
        const key = `${response.statusCode} ${body.status ?? ''}`;
        report.statuses[key] = (report.statuses[key] ?? 0) + 1;
        return;
      } catch {
        report.retried++;
        await sleep(100);
      }
    }
  };
  const all: Promise<void>[] = [];
  for (let sent = 0; sent < WAITERS; sent += BATCH) {
    for (let i = sent; i < Math.min(sent + BATCH, WAITERS); i++) all.push(one());
    await sleep(25);
  }
  await Promise.all(all);
  process.send!(report);
  await pool.close();
}

async function runBench(): Promise<void> {
  // One loopback client plays 10,000 agents: the per-IP limiter is off in bench services.
  const { service, base, dataDir } = await startBenchService({ MAX_PARKED_CONNECTIONS: String(WAITERS * 2) });
  const api = async (method: string, url: string, token?: string, body?: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return (await response.json()) as Record<string, any>;
  };

  try {
    const room = await api('POST', '/api/rooms', undefined, {
      question: 'Wake everyone?',
      options: ['yes', 'no'],
      config: { early_close: true, settle_window: 0 },
    });
    const slug = room.slug as string;
    const creator = room.creator_token as string;
    const other = (await api('POST', `/api/rooms/${slug}/join`, undefined, {})).participant_token as string;
    await api('POST', `/api/rooms/${slug}/choose`, creator, { choice: 'yes' });

    const memory = () => {
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      return { rssMiB: m.rss / 2 ** 20, heapUsedMiB: m.heapUsed / 2 ** 20 };
    };
    const before = memory();

    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, BENCH_ROLE: 'client', BENCH_BASE: base, BENCH_SLUG: slug, BENCH_TOKEN: creator },
    });
    let settled = false;
    const report = new Promise<ClientReport>((resolve, reject) => {
      child.once('message', (message) => resolve(message as ClientReport));
      child.once('exit', (code) => reject(new Error(`client exited with ${code}`)));
    }).finally(() => {
      settled = true;
    });

    const parkStarted = performance.now();
    while (service.engagement.waiters.parked < WAITERS) {
      if (settled) throw new Error(`the client finished before all waiters parked: ${JSON.stringify(await report)}`);
      if (performance.now() - parkStarted > PARK_TIMEOUT_MS) {
        throw new Error(`only ${service.engagement.waiters.parked} of ${WAITERS} parked in time`);
      }
      await sleep(50);
    }
    const parkSeconds = (performance.now() - parkStarted) / 1000;
    const parked = memory();

    let commitAt = 0;
    const stopListening = service.engagement.bus.listen(slug, () => {
      commitAt ||= preciseNow();
    });
    const deciding = await api('POST', `/api/rooms/${slug}/choose`, other, { choice: 'yes' });
    if (deciding.status !== 'resolved')
      throw new Error(`the deciding choice did not seal: ${JSON.stringify(deciding)}`);
    const { arrivals, statuses, retried } = await report;
    stopListening();
    const after = memory();

    const latencies = arrivals.map((at) => at - commitAt).sort((a, b) => a - b);
    const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const mib = (v: number) => `${v.toFixed(1)} MiB`;
    console.log(`long-poll wake: ${WAITERS} waiters parked on one process (${parkSeconds.toFixed(1)} s to park)`);
    console.log(`  answers:   ${JSON.stringify(statuses)}; 503/connection retries while parking: ${retried}`);
    console.log(`  latency:   p50 ${ms(at(50))}  p95 ${ms(at(95))}  p99 ${ms(at(99))}  max ${ms(at(100))}`);
    console.log(`  memory:    before rss ${mib(before.rssMiB)} heap ${mib(before.heapUsedMiB)}`);
    console.log(`             parked rss ${mib(parked.rssMiB)} heap ${mib(parked.heapUsedMiB)}`);
    console.log(`             after  rss ${mib(after.rssMiB)} heap ${mib(after.heapUsedMiB)}`);
    console.log(
      `             per parked waiter ≈ ${(((parked.heapUsedMiB - before.heapUsedMiB) * 2 ** 20) / WAITERS / 1024).toFixed(1)} KiB heap`,
    );
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
