/**
 * The parent's side of a reconnect storm (bench/burst-client.ts): forks the client, waits for its
 * messages, and turns what arrived into a table row that says how many of the burst were served, how
 * many the service timed out (408) and how many it asked to come back later (503 and Retry-After).
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './table.js';

export const BURST = Number(process.env.BENCH_BURST ?? 10_000);
/** Wall-clock milliseconds with sub-millisecond precision, comparable between processes. */
export const preciseNow = () => performance.timeOrigin + performance.now();
const CLIENT = fileURLToPath(new URL('./burst-client.ts', import.meta.url));
/** How long after the trigger the last arrival may come; later ones count as not served. */
const COLLECT_MS = 60_000;

export interface BurstTally {
  opened: number;
  timedOut: number;
  refused: number;
  failed: number;
  /** 503/429 answers retried after their Retry-After. */
  retried: number;
  /** Connections refused or reset before any answer (a full accept queue), made again. */
  reconnected: number;
}

export interface Burst {
  /** Stream mode: resolves once every stream has its status line (or its refusal). */
  settled(): Promise<BurstTally>;
  /** After the trigger: every arrival (or what arrived within the deadline) and the final tally. */
  arrivals(): Promise<{ arrivals: number[]; tally: BurstTally }>;
  close(): void;
}

/** `count` requests (BENCH_BURST unless a caller sizes its own, as the capacity case's streams do). */
export function startBurst(url: string, mode: 'stream' | 'long-poll', authorization?: string, count = BURST): Burst {
  const child = fork(CLIENT, [], {
    env: {
      ...process.env,
      BURST_URL: url,
      BURST_COUNT: String(count),
      BURST_MODE: mode,
      ...(authorization ? { BURST_AUTHORIZATION: authorization } : {}),
    },
    execArgv: ['--import', 'tsx'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  child.on('message', (message: Record<string, unknown>) => {
    messages.push(message);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`burst client exited with ${code}`))),
  );
  exited.catch(() => {});
  const next = async (key: string) => {
    for (;;) {
      const found = messages.find((m) => key in m);
      if (found) return found;
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), exited]);
    }
  };
  return {
    settled: async () => (await next('settled')).settled as BurstTally,
    arrivals: async () => {
      child.send({ collect: COLLECT_MS });
      return (await next('arrivals')) as unknown as { arrivals: number[]; tally: BurstTally };
    },
    close: () => {
      child.removeAllListeners('exit');
      child.send({ close: true });
    },
  };
}

/** One row: latency of each arrival after the trigger, and the burst's outcome in the errors and note. */
export function burstRow(name: string, trigger: number, arrivals: number[], tally: BurstTally, note: string): BenchRow {
  const latency = arrivals.map((at) => at - trigger).sort((a, b) => a - b);
  const at = (q: number) => latency[Math.min(latency.length - 1, Math.ceil(q * latency.length) - 1)];
  const outcome = `served ${arrivals.length}/${BURST}, 408 × ${tally.timedOut}, 503 retried × ${tally.retried}`;
  return {
    case: name,
    ...(latency.length > 0 ? { p50: at(0.5)!, p99: at(0.99)! } : {}),
    errors: BURST - arrivals.length,
    note: `${outcome}; ${note}`,
  };
}

/** A row beside its floor: p99 over the floor's p99, and what that ratio is read against (the target ≤ 1.2, by default). */
export function againstFloor(row: BenchRow, floor: BenchRow, reading = 'target ≤ 1.2'): BenchRow {
  const ratio = row.p99 !== undefined && floor.p99 ? row.p99 / floor.p99 : undefined;
  return { ...row, ratio, note: `p99 ratio vs the floor row (${reading}); ${row.note}` };
}
