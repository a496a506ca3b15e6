/**
 * Process start-up, cold, of the built service as `npm start` runs it (bench/run.ts builds it first):
 * to listening (liveness answers, before the app's modules load: src/start.ts), to serving (the app
 * answers on that socket) and to ready (the warm-up over, /readyz 200), beside a bare node:http
 * process started the same way (the floor: what starting Node itself costs here).
 * Median of three starts each.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILT_SERVICE } from '../../test/support/built.js';
import { percentile } from '../../test/support/ledger.js';
import { untilPrinted } from '../child-output.js';
import type { BenchCase, BenchRow } from '../table.js';

const STARTS = 3;
const FLOOR_SOURCE =
  "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', () => console.log('listening'))";

const median = (values: number[]) => percentile(values, 50);

/** Milliseconds from spawning `child` to its printing each marker in turn; the child is killed after. */
export async function timeStart(child: ChildProcess, markers: string[]): Promise<number[]> {
  const started = performance.now();
  const times: number[] = [];
  try {
    for (const marker of markers) {
      await untilPrinted(child, marker);
      times.push(performance.now() - started);
    }
  } finally {
    child.kill('SIGKILL');
  }
  return times;
}

/** Milliseconds from spawning a bare node:http server to its listening: the floor of every start-up row. */
export async function timeFloorStart(): Promise<number> {
  const [bare] = await timeStart(
    spawn(process.execPath, ['-e', FLOOR_SOURCE], { stdio: ['ignore', 'pipe', 'ignore'] }),
    ['listening'],
  );
  return bare!;
}

export const startup: BenchCase = {
  id: 'startup',
  async run() {
    const floor: number[] = [];
    const listening: number[] = [];
    const serving: number[] = [];
    const ready: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      floor.push(await timeFloorStart());
      const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-bench-startup-'));
      try {
        const [live, loaded, warm] = await timeStart(
          spawn(process.execPath, [BUILT_SERVICE], {
            env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' },
            stdio: ['ignore', 'pipe', 'ignore'],
          }),
          ['conclave listening', 'conclave serving', 'conclave ready'],
        );
        listening.push(live!);
        serving.push(loaded!);
        ready.push(warm!);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
    const rows: BenchRow[] = [
      { case: 'start-up: bare node:http (floor)', p50: median(floor), note: `median of ${STARTS} starts` },
      {
        case: 'start-up to listening (built, cold)',
        p50: median(listening),
        ratio: median(listening) / median(floor),
        note: `liveness from here; bar ≤ 1 s; ratio = / floor; starts ${listening.map(Math.round).join('/')} ms`,
      },
      {
        case: 'start-up to serving (built, cold)',
        p50: median(serving),
        note: `the app answers (its modules loaded); starts ${serving.map(Math.round).join('/')} ms`,
      },
      {
        case: 'start-up to ready (built, cold)',
        p50: median(ready),
        note: `/readyz 200 from here (warm-up over, WARMUP_MAX_MS bounds it); bar ≤ 5 s; starts ${ready.map(Math.round).join('/')} ms`,
      },
    ];
    return rows;
  },
};
