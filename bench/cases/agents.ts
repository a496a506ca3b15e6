/**
 * Issue 27's 200-agent MCP scenario (test/support/agents-scenario.ts: both eras, 10 rooms of 20,
 * join_room → wait → choose → discuss) against one embedded SQLite process and against three Redis
 * processes behind the shipped nginx template, in the same run, default limits on both. The rows are
 * `choose` latency per call; the Redis row's ratio is its p99 over the embedded p99 (the acceptance
 * bar is ≤ 2). Both sides are separate node processes, so the 200 clients in this process load both
 * the same way. Every process runs the service's start-up warm-up as shipped (WARMUP_TURNS), and each
 * deployment then serves a small unmeasured pass (BENCH_AGENT_WARMUP agents, 20 by default), so
 * neither is measured cold.
 *
 * One scenario is 200 `choose` calls, and its p99 is its second-slowest call: on a shared machine
 * that figure moves several-fold from one scenario to the next. So the deployments take turns for
 * BENCH_AGENT_ROUNDS rounds (3 by default), each round on fresh processes (a fresh deployment also
 * starts with fresh rate-limit budgets, as the scenario's rooms all come from one address), and the
 * rows give the percentiles of all rounds' calls together.
 *
 * The middle row, one Redis process behind the same nginx, is the same-run baseline that separates
 * what Redis and nginx cost from what three processes sharing this machine's cores cost. The last row
 * is the other side of that: three embedded processes that share nothing at all (no Redis, no nginx,
 * no lock, each with its own rooms, split as evenly as the rooms allow, and its stores on tmpfs, since
 * three fsyncs would queue on one disk where the test Redis does not fsync), the same clients calling
 * each directly. Whatever three processes cost on this machine's cores, that row pays too, and none of
 * the coordination: the three-Redis row's note gives its p99 over this row's.
 *
 * The 200 clients run in this process, on the same cores as the deployment under test. Left to the
 * scheduler's fair share, three busy service processes take more of the cores from the clients than
 * one does, and the clients' own event loop then lags by hundreds of milliseconds: that lag lands in
 * every latency they measure, and more so against three processes (measured: the clients' loop delay
 * p99 ~400 ms against three processes, ~150 ms against one). So the services run at a lower CPU
 * priority (`nice`, BENCH_AGENT_NICE, 10 by default; 0 turns it off), every deployment alike, and each
 * row notes the clients' loop delay p99 as its check that the load generator was not the bottleneck,
 * and the CPU its service processes spent on each measured scenario: the figure the code decides,
 * where the latencies also carry the machine's luck.
 *   BENCH_ONLY=agents npm run bench
 */
import { constants } from 'node:fs';
import { access, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from '../../test/support/ledger.js';
import { errorSummary, runAgentsScenario, type ScenarioResult } from '../../test/support/agents-scenario.js';
import { startEmbeddedProcess, startRedisDeployment } from '../../test/support/agents-topology.js';
import { startRedisServer, type TestRedisServer } from '../../test/support/redis-server.js';
import { hasNginx } from '../../test/support/topology.js';
import { processCpuMs } from '../process-cpu.js';
import { shippedWarmUpEnv } from '../shipped-warm-up.js';
import type { BenchCase, BenchRow } from '../table.js';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 200);
const ROOMS = Number(process.env.BENCH_AGENT_ROOMS ?? 10);
/** Agents of an unmeasured first pass on each deployment (2 rooms), so both are measured warm. */
const WARMUP_AGENTS = Number(process.env.BENCH_AGENT_WARMUP ?? 20);
const ROUNDS = Math.max(1, Number(process.env.BENCH_AGENT_ROUNDS ?? 3));
const NICE = Number(process.env.BENCH_AGENT_NICE ?? 10);
/** How the service processes are started: at a lower CPU priority than the clients measuring them. */
const WRAPPER = NICE > 0 ? ['nice', '-n', String(NICE)] : undefined;
/** Every process starts as shipped, start-up warm-up included: the bar is about deployments as they ship. */
const SHIPPED = shippedWarmUpEnv();

/**
 * CPU time the service processes have used together, in ms. Latency on a shared 2-core machine
 * moves with the machine; the CPU a deployment spends on the same scenario is what its code decides.
 */
function cpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
}

/** The measured scenario, after a small unmeasured one on the same deployment (JIT, pools, caches). */
function warmRun(base: string, pids: readonly number[], into: Pooled): Promise<void> {
  return measured(
    pids,
    into,
    () =>
      WARMUP_AGENTS > 0 ? runAgentsScenario({ base, agents: WARMUP_AGENTS, rooms: Math.min(2, WARMUP_AGENTS) }) : null,
    () => runAgentsScenario({ base, agents: AGENTS, rooms: ROOMS }),
  );
}

/** One measured scenario after its unmeasured warm-up: the clients' loop delay and the services' CPU beside it. */
async function measured(
  pids: readonly number[],
  into: Pooled,
  warmUp: () => Promise<unknown> | null,
  scenario: () => Promise<ScenarioResult>,
): Promise<void> {
  await warmUp();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const cpuBefore = cpuMs(pids);
  try {
    into.results.push(await scenario());
  } finally {
    lag.disable();
    into.clientLagP99Ms.push(lag.percentile(99) / 1e6);
    into.serviceCpuMs.push(cpuMs(pids) - cpuBefore);
  }
}

/** One deployment's scenarios over all rounds. */
class Pooled {
  readonly results: ScenarioResult[] = [];
  /** The clients' event-loop delay p99 in each measured scenario. */
  readonly clientLagP99Ms: number[] = [];
  /** The service processes' CPU in each measured scenario, all processes together. */
  readonly serviceCpuMs: number[] = [];
  constructor(readonly name: string) {}

  row(): BenchRow {
    const chooses = this.results.flatMap((result) => result.latencies.choose);
    const joins = this.results.flatMap((result) => result.latencies.join_room);
    const rooms = this.results.flatMap((result) => result.rooms);
    const errors = this.results.flatMap((result) => result.errors);
    const unverified = rooms.filter((room) => !room.resolved || room.problems.length > 0).length;
    const perRound = this.results.map((result) => percentile(result.latencies.choose, 99).toFixed(0)).join('/');
    const firstErrors = this.results.flatMap((result) => Object.keys(errorSummary(result))).slice(0, 2);
    return {
      case: this.name,
      p50: percentile(chooses, 50),
      p99: percentile(chooses, 99),
      errors: errors.length,
      note:
        `${chooses.length} chooses in ${this.results.length} rounds (p99 per round ${perRound} ms), ` +
        `${rooms.length - unverified}/${rooms.length} rooms verified, join p99 ${percentile(joins, 99).toFixed(0)} ms, ` +
        `clients' loop delay p99 ${this.clientLagP99Ms.map((ms) => ms.toFixed(0)).join('/')} ms, ` +
        `services' CPU per scenario ${this.serviceCpuMs.map((ms) => (ms / 1000).toFixed(1)).join('/')} s` +
        (firstErrors.length > 0 ? `; first errors: ${firstErrors.join(' | ').slice(0, 160)}` : ''),
    };
  }
}

async function onRedis(redis: TestRedisServer, processes: number, into: Pooled): Promise<void> {
  const deployment = await startRedisDeployment(redis, SHIPPED, processes, WRAPPER);
  try {
    const pids = deployment.fleet.processes.map((process) => process!.child.pid!);
    await warmRun(deployment.base, pids, into);
  } finally {
    await deployment.stop();
  }
}

/** The scenario's rooms dealt to `parts` processes as evenly as they go (10 over 3: 4, 3, 3), each with its agents. */
function shares(parts: number): { agents: number; rooms: number }[] {
  const perRoom = Math.ceil(AGENTS / ROOMS);
  return Array.from({ length: parts }, (_, part) => {
    const rooms = Math.floor(ROOMS / parts) + (part < ROOMS % parts ? 1 : 0);
    return { agents: rooms * perRoom, rooms };
  }).filter((share) => share.rooms > 0);
}

/** The scenarios run side by side on several processes, as one result. */
function together(parts: ScenarioResult[]): ScenarioResult {
  const latencies: ScenarioResult['latencies'] = { connect: [], join_room: [], wait: [], choose: [], discuss: [] };
  const eras: Record<string, number> = {};
  for (const part of parts) {
    for (const step of Object.keys(latencies) as (keyof typeof latencies)[])
      latencies[step].push(...part.latencies[step]);
    for (const [era, count] of Object.entries(part.eras)) eras[era] = (eras[era] ?? 0) + count;
  }
  return {
    agents: parts.reduce((sum, part) => sum + part.agents, 0),
    rooms: parts.flatMap((part) => part.rooms),
    errors: parts.flatMap((part) => part.errors),
    latencies,
    eras,
    acknowledged: parts.flatMap((part) => part.acknowledged),
    elapsedMs: Math.max(...parts.map((part) => part.elapsedMs)),
  };
}

/** Where the nothing-shared processes keep their stores: tmpfs when the machine has one. */
const TMPFS = '/dev/shm';

/** Three embedded processes sharing nothing, each given its share of the rooms and agents directly. */
async function onNothingShared(processes: number, into: Pooled): Promise<void> {
  const root = await access(TMPFS, constants.W_OK).then(
    () => TMPFS,
    () => tmpdir(),
  );
  const services = await Promise.all(
    Array.from({ length: processes }, async () =>
      startEmbeddedProcess(WRAPPER, SHIPPED, await mkdtemp(join(root, 'conclave-nothing-shared-'))),
    ),
  );
  try {
    const warmUpEach = Math.ceil(WARMUP_AGENTS / processes);
    const dealt = shares(processes);
    await measured(
      services.map((service) => service.child.pid!),
      into,
      () =>
        Promise.all(
          services.map((service) =>
            warmUpEach > 0 ? runAgentsScenario({ base: service.base, agents: warmUpEach, rooms: 1 }) : null,
          ),
        ),
      async () =>
        together(
          await Promise.all(dealt.map((share, index) => runAgentsScenario({ base: services[index]!.base, ...share }))),
        ),
    );
  } finally {
    await Promise.all(services.map((service) => service.stop()));
  }
}

export const agents: BenchCase = {
  id: 'agents',
  async run() {
    const embedded = new Pooled('agents: choose (1 embedded)');
    const single = new Pooled('agents: choose (1 redis + nginx)');
    const fleet = new Pooled('agents: choose (3 redis + nginx)');
    const apart = new Pooled('agents: choose (3 embedded, nothing shared)');
    const redis = hasNginx ? await startRedisServer() : null;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const process = await startEmbeddedProcess(WRAPPER, SHIPPED);
        try {
          await warmRun(process.base, [process.child.pid!], embedded);
        } finally {
          await process.stop();
        }
        if (redis === null) continue;
        await onRedis(redis, 1, single);
        await onRedis(redis, 3, fleet);
        await onNothingShared(3, apart);
      }
    } finally {
      await redis?.stop();
    }
    const local = embedded.row();
    if (redis === null) return [local, { case: fleet.name, note: 'skipped: no redis-server or nginx' }];
    const versus = (row: BenchRow, bar: string): BenchRow => ({
      ...row,
      ratio: row.p99 && local.p99 ? row.p99 / local.p99 : undefined,
      note: `ratio = p99 / embedded p99${bar}; ${row.note}`,
    });
    const nothingShared = versus(apart.row(), '');
    const threeRedis = fleet.row();
    const overNothingShared =
      threeRedis.p99 && nothingShared.p99
        ? `, ${(threeRedis.p99 / nothingShared.p99).toFixed(2)}× the nothing-shared p99`
        : '';
    return [local, versus(single.row(), ''), versus(threeRedis, ` (bar ≤ 2)${overNothingShared}`), nothingShared];
  },
};
