/**
 * The numbers of one deployment, for the capacity arithmetic of docs/operators.md (Capacity): a
 * Redis Cluster of three masters with a replica each and BENCH_CAPACITY_PROCESSES (3) service
 * processes on it, measured step by step (bench/capacity/*), every figure beside a floor from the
 * same run, then the arithmetic itself (bench/capacity/plan.ts) for 1 M and 10 M rooms and 10,000
 * writes a second, printed as the last rows.
 *   BENCH_ONLY=capacity npm run bench
 * Sizes: BENCH_CAPACITY_TYPICAL_ROOMS, _MANY_ROOMS, _NOTICE_ROOMS, _ROOMS, _CONNECTIONS, _COMMITS,
 * _RECEIPTS, _STREAMS, _STARTS (each step's file says what it sizes); BENCH_SECONDS for the write load.
 */
import { type Deployment, startDeployment, stopDeployment } from '../capacity/deployment.js';
import { type CapacityFigures, ROWS, type Step } from '../capacity/inputs.js';
import { measureIntegration } from '../capacity/integration.js';
import { measureNotices } from '../capacity/notices.js';
import { ASSUMPTIONS, planRooms, planWrites } from '../capacity/plan.js';
import { measureRoomBytes } from '../capacity/room-bytes.js';
import { measureStartUp } from '../capacity/start-up.js';
import { measureStreamMemory } from '../capacity/stream-memory.js';
import { measureWrites } from '../capacity/writes.js';
import type { BenchCase, BenchContext, BenchRow } from '../table.js';

const PROCESSES = Number(process.env.BENCH_CAPACITY_PROCESSES ?? 3);

/** Every measurement, in order; each adds its rows and its figures. */
function steps(context: BenchContext): Step<Partial<CapacityFigures>>[] {
  return [
    measureRoomBytes,
    measureNotices,
    measureWrites(context),
    measureIntegration,
    measureStreamMemory,
    measureStartUp,
  ];
}

const count = (n: number) => (n >= 1e6 ? `${n / 1e6} M` : n >= 1e3 ? `${n / 1e3} k` : String(n));
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** The arithmetic of docs/operators.md (Capacity) on this run's figures. */
export function planRows(figures: CapacityFigures): BenchRow[] {
  const rows: BenchRow[] = [1e6, 1e7].map((rooms) => {
    const plan = planRooms(figures, rooms);
    return {
      case: `${ROWS.plan} ${count(rooms)} rooms, ${ASSUMPTIONS.liveFraction * 100} % live`,
      note: `${gib(plan.redisBytes)} of room data on the masters (as much again on replicas): ${plan.mastersForMemory} masters by memory at ${gib(ASSUMPTIONS.masterDataBytes)} of data each`,
    };
  });
  const writes = planWrites(figures, 10_000);
  rows.push({
    case: `${ROWS.plan} ${count(writes.writesPerSecond)} writes/s`,
    note:
      `redis ${writes.redisCores.toFixed(1)} cores: ${writes.mastersForCpu} masters by CPU; ` +
      `service ${writes.serviceCores.toFixed(1)} cores: ${writes.processesForWrites} processes; ` +
      `${count(Math.round(writes.noticesPerProcessPerSecond))} notices/s into a process waiting on the measured share of rooms; ` +
      `${Math.round(writes.receiptsPerSecond)} receipts/s, the integrator ${writes.integrationHeadroom.toFixed(1)}× that; ` +
      `${count(ASSUMPTIONS.parkedPerProcess)} streams = ${(writes.parkedBytesPerProcess / 2 ** 20).toFixed(0)} MiB a process`,
  });
  return rows;
}

export const capacity: BenchCase = {
  id: 'capacity',
  async run(context) {
    const deployment: Deployment | null = await startDeployment(PROCESSES);
    if (deployment === null) return [{ case: 'capacity', note: 'skipped: no redis-server' }];
    const rows: BenchRow[] = [];
    const figures: Partial<CapacityFigures> = {};
    try {
      for (const step of steps(context)) {
        const result = await step(deployment);
        rows.push(...result.rows);
        Object.assign(figures, result.figures);
      }
    } finally {
      await stopDeployment(deployment);
    }
    return [...rows, ...planRows(figures as CapacityFigures)];
  },
};
