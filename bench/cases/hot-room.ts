/**
 * 1,000 agents choosing in one room, from a separate client process: latency of every
 * acknowledgement, with every choice sent at once, and with the choices spread evenly over one
 * second (the "within ~1 s"). Each row: one warm-up room, then three measured rooms; the
 * row is the median round by p99, and the note gives the other two.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { spawnService } from '../../test/support/child-service.js';
import { BENCH_ENV, startBenchService } from '../bench-service.js';
import { shippedWarmUpEnv } from '../shipped-warm-up.js';
import type { BenchCase, BenchRow } from '../table.js';

const AGENTS = 1000;
const ROUNDS = 3;
/** Fresh processes for the cold row, each measured on its first burst. */
const COLD_STARTS = 3;

interface RoundFigures {
  acknowledged: number;
  p50: number;
  p99: number;
  max: number;
  receipts: number;
  chainOk: boolean;
}

function runClient(base: string, spreadMs: number, rounds = ROUNDS, warmups = 1): Promise<RoundFigures[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/hot-room-client.ts',
        base,
        String(AGENTS),
        String(rounds),
        String(spreadMs),
        String(warmups),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`hot-room client exited with ${code}`));
      resolve(
        out
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as RoundFigures),
      );
    });
  });
}

async function measure(name: string, spreadMs: number): Promise<BenchRow> {
  const { service, base, dataDir } = await startBenchService();
  try {
    const rounds = (await runClient(base, spreadMs)).sort((a, b) => a.p99 - b.p99);
    const median = rounds[Math.floor(rounds.length / 2)]!;
    const others = rounds.filter((r) => r !== median).map((r) => Math.round(r.p99));
    const allOk = rounds.every((r) => r.acknowledged === AGENTS && r.receipts === 1 && r.chainOk);
    return {
      case: name,
      p50: median.p50,
      p99: median.p99,
      errors: rounds.reduce((sum, r) => sum + AGENTS - r.acknowledged, 0),
      note: `median of ${rounds.length} rooms after a warm-up (other p99 ${others.join(', ')} ms); each: ${AGENTS} acks, 1 receipt, chain ${allOk ? 'verifies' : 'FAILS'}`,
    };
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The first burst after start-up: a service process started the way `npm start` starts it (through
 * tsx), 1,000 agents seated, then all of them choosing at once, with no warm-up room before.
 */
async function measureCold(name: string, warm: BenchRow): Promise<BenchRow> {
  const rounds: RoundFigures[] = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    // The service's own start-up, warm-up included.
    const service = await spawnService({ ...BENCH_ENV, LOG_LEVEL: 'silent', ...shippedWarmUpEnv() }, { capture: true });
    try {
      rounds.push(...(await runClient(service.base, 0, 1, 0)));
    } finally {
      await service.stop();
    }
  }
  rounds.sort((a, b) => a.p99 - b.p99);
  const median = rounds[Math.floor(rounds.length / 2)]!;
  const others = rounds.filter((r) => r !== median).map((r) => Math.round(r.p99));
  return {
    case: name,
    p50: median.p50,
    p99: median.p99,
    ratio: warm.p99 ? median.p99 / warm.p99 : undefined,
    errors: rounds.reduce((sum, r) => sum + AGENTS - r.acknowledged, 0),
    note: `p99 ratio vs the warm row above; median of ${rounds.length} fresh processes (other p99 ${others.join(', ')} ms); target p99 ≤ 400 ms`,
  };
}

export const hotRoom: BenchCase = {
  id: 'hot-room',
  async run() {
    const warm = await measure(`hot room, ${AGENTS} agents choose at once`, 0);
    return [
      warm,
      await measureCold(`hot room, ${AGENTS} at once, first burst after start-up`, warm),
      await measure(`hot room, ${AGENTS} agents within 1 s`, 1000),
    ];
  },
};
