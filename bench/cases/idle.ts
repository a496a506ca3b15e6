/**
 * What a service process costs while nobody calls it: CPU a second of the built service (as `npm
 * start` runs it, start-up warm-up included) on the embedded store and on Redis, beside a bare
 * `node:http` process that only listens, measured side by side over the same seconds. An idle
 * process's CPU is what every replica of a deployment pays all the time, and what a busy
 * deployment's quieter processes pay between calls (docs/performance.md, An idle process).
 *   BENCH_ONLY=idle npm run bench            BENCH_IDLE_SECONDS=30 for a finer figure
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUILT_SERVICE } from '../../test/support/built.js';
import { startRedisServer } from '../../test/support/redis-server.js';
import { untilPrinted } from '../child-output.js';
import { processCpuMs } from '../process-cpu.js';
import type { BenchCase, BenchRow } from '../table.js';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 15);
/** After listening: the warm-up's garbage collected and its timers settled before measuring. */
const SETTLE_MS = 3000;
const FLOOR_SOURCE = "require('node:http').createServer().listen(0, '127.0.0.1', () => console.log('listening'))";

export const idle: BenchCase = {
  id: 'idle',
  async run() {
    const redis = await startRedisServer();
    if (!redis) throw new Error('redis-server is required for the idle case');
    const dataDirs = await Promise.all(
      ['sqlite', 'redis'].map((store) => mkdtemp(path.join(tmpdir(), `conclave-bench-idle-${store}-`))),
    );
    const service = (env: Record<string, string>) =>
      spawn(process.execPath, [BUILT_SERVICE], {
        env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    const processes = [
      {
        name: 'floor: idle node:http process',
        child: spawn(process.execPath, ['-e', FLOOR_SOURCE], { stdio: ['ignore', 'pipe', 'ignore'] }),
        marker: 'listening',
      },
      {
        name: 'idle service process (sqlite)',
        child: service({ DATA_DIR: dataDirs[0]! }),
        marker: 'conclave ready',
      },
      {
        name: 'idle service process (redis)',
        child: service({ DATA_DIR: dataDirs[1]!, STORE: 'redis', REDIS_URL: redis.url }),
        marker: 'conclave ready',
      },
    ];
    try {
      await Promise.all(processes.map(({ child, marker }) => untilPrinted(child, marker)));
      await sleep(SETTLE_MS);
      const before = processes.map(({ child }) => processCpuMs(child.pid!));
      await sleep(SECONDS * 1000);
      const perSecond = processes.map(({ child }, i) => (processCpuMs(child.pid!) - before[i]!) / SECONDS);
      const floor = perSecond[0]!;
      return processes.map(
        ({ name }, i): BenchRow => ({
          case: name,
          note:
            i === 0
              ? `${floor.toFixed(1)} ms CPU a second, over ${SECONDS} s`
              : `${perSecond[i]!.toFixed(1)} ms CPU a second (the floor ${floor.toFixed(1)}), over the same ${SECONDS} s`,
        }),
      );
    } finally {
      for (const { child } of processes) child.kill('SIGKILL');
      await redis.stop();
      await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  },
};
