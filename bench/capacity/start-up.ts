/**
 * Start-to-ready of one more service process joining the deployment: the built service as `npm
 * start` runs it, on the deployment's Cluster, start-up warm-up as shipped, timed to `conclave
 * ready` (/readyz 200 from then), beside a bare node:http process started the same way (the floor;
 * bench/cases/startup.ts). Median of BENCH_CAPACITY_STARTS (3) each.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILT_SERVICE } from '../../test/support/built.js';
import { percentile } from '../../test/support/ledger.js';
import { timeFloorStart, timeStart } from '../cases/startup.js';
import { ROWS, type StartUp, type Step } from './inputs.js';

const STARTS = Number(process.env.BENCH_CAPACITY_STARTS ?? 3);

export const measureStartUp: Step<StartUp> = async (deployment) => {
  const floor: number[] = [];
  const ready: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    floor.push(await timeFloorStart());
    const dataDir = await mkdtemp(path.join(tmpdir(), 'conclave-bench-capacity-'));
    try {
      const [warm] = await timeStart(
        spawn(process.execPath, [BUILT_SERVICE], {
          env: {
            ...process.env,
            ...deployment.env,
            DATA_DIR: dataDir,
            PORT: '0',
            LOG_LEVEL: 'info',
          },
          stdio: ['ignore', 'pipe', 'ignore'],
        }),
        ['conclave ready'],
      );
      ready.push(warm!);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const figures: StartUp = { readyMs: percentile(ready, 50), floorMs: percentile(floor, 50) };
  return {
    figures,
    rows: [
      { case: ROWS.startFloor, p50: figures.floorMs, note: `median of ${STARTS} starts` },
      {
        case: `${ROWS.startUp} (cluster)`,
        p50: figures.readyMs,
        ratio: figures.readyMs / figures.floorMs,
        note: `ratio = / floor; built, warm-up as shipped, on the deployment's Cluster; starts ${ready.map(Math.round).join('/')} ms`,
      },
    ],
  };
};
