/** 1,000 agents choosing in one room at once, from a separate client process: latency of every acknowledgement. */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { startBenchService } from '../bench-service.js';
import type { BenchCase } from '../table.js';

const AGENTS = 1000;

interface ClientFigures {
  acknowledged: number;
  p50: number;
  p99: number;
  max: number;
  receipts: number;
  chainOk: boolean;
}

function runClient(base: string): Promise<ClientFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/hot-room-client.ts', base, String(AGENTS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ClientFigures);
      else reject(new Error(`hot-room client exited with ${code}`));
    });
  });
}

export const hotRoom: BenchCase = {
  id: 'hot-room',
  async run() {
    const { service, base, dataDir } = await startBenchService();
    try {
      const run = await runClient(base);
      return [
        {
          case: `hot room, ${AGENTS} agents choose at once`,
          p50: run.p50,
          p99: run.p99,
          errors: AGENTS - run.acknowledged,
          note: `${run.acknowledged} acks, last ${Math.round(run.max)} ms; ${run.receipts} receipt, chain ${run.chainOk ? 'verifies' : 'FAILS'}`,
        },
      ];
    } finally {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  },
};
