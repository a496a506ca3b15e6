/**
 * Issue 27's 200-agent MCP scenario (test/support/agents-scenario.ts: both eras, 10 rooms of 20,
 * join_room → wait → choose → discuss) against one embedded SQLite process and against three Redis
 * processes behind the shipped nginx template, in the same run, default limits on both. The rows are
 * `choose` latency per call; the Redis row's ratio is its p99 over the embedded p99 (the acceptance
 * bar is ≤ 2). Both sides are separate node processes started as `npm start` starts them, so the
 * 200 clients in this process load both the same way. Each deployment first serves a small
 * unmeasured pass (BENCH_AGENT_WARMUP agents, 20 by default), so neither is measured cold.
 *   BENCH_ONLY=agents npm run bench
 */
import { percentile } from '../../test/support/ledger.js';
import { errorSummary, runAgentsScenario, type ScenarioResult } from '../../test/support/agents-scenario.js';
import { startEmbeddedProcess, startRedisDeployment } from '../../test/support/agents-topology.js';
import { startRedisServer } from '../../test/support/redis-server.js';
import { hasNginx } from '../../test/support/topology.js';
import type { BenchCase, BenchRow } from '../table.js';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 200);
const ROOMS = Number(process.env.BENCH_AGENT_ROOMS ?? 10);
/** Agents of an unmeasured first pass on each deployment (2 rooms), so both are measured warm. */
const WARMUP_AGENTS = Number(process.env.BENCH_AGENT_WARMUP ?? 20);

/** The measured scenario, after a small unmeasured one on the same deployment (JIT, pools, caches). */
async function warmRun(base: string): Promise<ScenarioResult> {
  if (WARMUP_AGENTS > 0) await runAgentsScenario({ base, agents: WARMUP_AGENTS, rooms: Math.min(2, WARMUP_AGENTS) });
  return runAgentsScenario({ base, agents: AGENTS, rooms: ROOMS });
}

function chooseRow(name: string, result: ScenarioResult): BenchRow {
  const unverified = result.rooms.filter((room) => !room.resolved || room.problems.length > 0).length;
  return {
    case: name,
    p50: percentile(result.latencies.choose, 50),
    p99: percentile(result.latencies.choose, 99),
    errors: result.errors.length,
    note:
      `${result.latencies.choose.length} chooses, ${result.rooms.length - unverified}/${result.rooms.length} rooms verified, ` +
      `join p99 ${percentile(result.latencies.join_room, 99).toFixed(0)} ms, ${(result.elapsedMs / 1000).toFixed(1)} s` +
      (result.errors.length > 0
        ? `; first errors: ${Object.keys(errorSummary(result)).slice(0, 2).join(' | ').slice(0, 160)}`
        : ''),
  };
}

export const agents: BenchCase = {
  id: 'agents',
  async run() {
    const embedded = await startEmbeddedProcess();
    let local: BenchRow;
    try {
      local = chooseRow(`agents: choose (1 embedded)`, await warmRun(embedded.base));
    } finally {
      await embedded.stop();
    }
    const rows: BenchRow[] = [local];
    const redis = hasNginx ? await startRedisServer() : null;
    if (redis === null)
      return [...rows, { case: 'agents: choose (3 redis + nginx)', note: 'skipped: no redis-server or nginx' }];
    try {
      const deployment = await startRedisDeployment(redis);
      try {
        const row = chooseRow('agents: choose (3 redis + nginx)', await warmRun(deployment.base));
        const ratio = row.p99 && local.p99 ? row.p99 / local.p99 : undefined;
        rows.push({ ...row, ratio, note: `ratio = p99 / embedded p99 (bar ≤ 2); ${row.note}` });
      } finally {
        await deployment.stop();
      }
    } finally {
      await redis.stop();
    }
    return rows;
  },
};
