/** Process start-up to listening, cold, of the built service as `npm start` runs it (bench/run.ts builds it first). */
import { untilPrinted } from '../child-output.js';
import type { BenchCase } from '../table.js';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILT_SERVICE } from '../../test/support/built.js';

export const startup: BenchCase = {
  id: 'startup',
  async run() {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-bench-startup-'));
    const started = performance.now();
    const child = spawn(process.execPath, [BUILT_SERVICE], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await untilPrinted(child, 'conclave listening');
      return [
        {
          case: 'start-up to listening (built, cold)',
          note: `${Math.round(performance.now() - started)} ms, the start-up warm-up included (WARMUP_TURNS)`,
        },
      ];
    } finally {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
