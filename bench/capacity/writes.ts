/**
 * Writes a second the deployment sustains: `choose` across many rooms (each room's calls on the
 * process that created it, as nginx's room affinity sends them), every process loaded at once from
 * this process. Read beside it: the Redis CPU of every write (the masters' used_cpu_user +
 * used_cpu_sys over the load, divided by the writes acknowledged) and the service processes' CPU
 * of every write (/proc). The floor, in the same run: redis-benchmark's EVAL of one SET on every
 * master at once (the same AOF `appendfsync always`; no WAIT for a replica), its rate and its CPU
 * per call. The CPU figures are the steadier ones on a shared machine: a write costs what the code
 * decides, where a rate is whatever cores were left.
 *   BENCH_CAPACITY_ROOMS (300), BENCH_CAPACITY_CONNECTIONS per process (10), BENCH_SECONDS
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { processCpuMs } from '../process-cpu.js';
import type { BenchContext } from '../table.js';
import { commandCalls, type Deployment, inParallel, mastersCpuSeconds } from './deployment.js';
import { apiFor } from '../bench-service.js';
import { ROWS, type Step, type WriteCost } from './inputs.js';

const run = promisify(execFile);

const ROOMS = Number(process.env.BENCH_CAPACITY_ROOMS ?? 300);
const CONNECTIONS = Number(process.env.BENCH_CAPACITY_CONNECTIONS ?? 10);
const FLOOR_CALLS = Number(process.env.BENCH_CAPACITY_FLOOR_CALLS ?? 30_000);

interface Seat {
  slug: string;
  token: string;
  /** How many times this seat has chosen: it alternates, so every choose changes the vote. */
  chosen: number;
}

/** The rooms, dealt round the processes: process i's seats are the rooms it created. */
async function seatRooms(deployment: Deployment): Promise<Seat[][]> {
  const seats: Seat[][] = deployment.processes.map(() => []);
  await inParallel(ROOMS, 20, async (i) => {
    const p = i % deployment.processes.length;
    const room = await apiFor(deployment.processes[p]!.base)('POST', '/api/rooms', undefined, {
      question: 'Capacity?',
      options: ['alpha', 'beta'],
      config: { voting_window: 1_209_600 },
    });
    seats[p]!.push({ slug: room.slug, token: room.creator_token, chosen: 0 });
  });
  return seats;
}

function chooseLoad(base: string, seats: Seat[], seconds: number): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const seat = seats[next++ % seats.length]!;
          seat.chosen++;
          return {
            ...request,
            path: `/api/rooms/${seat.slug}/choose`,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${seat.token}` },
            body: JSON.stringify({ choice: seat.chosen % 2 === 0 ? 'alpha' : 'beta' }),
          };
        },
      },
    ],
  });
}

/** A hash tag served by each master, so that each benchmark's keys stay on its node. */
async function tagsPerMaster(deployment: Deployment): Promise<Map<number, string>> {
  const tags = new Map<number, string>();
  for (let i = 0; tags.size < deployment.masters.length; i++) {
    const master = await deployment.cluster.masterOf(`{capacity${i}}`);
    if (!tags.has(master)) tags.set(master, `capacity${i}`);
  }
  return tags;
}

/** redis-benchmark's EVAL of one SET on every master at once: calls a second (summed) and CPU per call. */
async function evalFloor(deployment: Deployment): Promise<{ perSecond: number; cpuMsPerCall: number }> {
  const tags = await tagsPerMaster(deployment);
  const cpuBefore = await mastersCpuSeconds(deployment);
  const rates = await Promise.all(
    [...tags].map(async ([port, tag]) => {
      const { stdout } = await run(
        'redis-benchmark',
        ['-p', String(port), '-n', String(FLOOR_CALLS), '-c', String(CONNECTIONS), '-r', '100000', '-q'].concat([
          'EVAL',
          "return redis.call('SET', KEYS[1], ARGV[1])",
          '1',
          `{${tag}}:__rand_int__`,
          'x'.repeat(64),
        ]),
        { timeout: 120_000 },
      );
      const rate = /([0-9.]+) requests per second/.exec(stdout.split('\r').at(-1) ?? stdout)?.[1];
      if (rate === undefined) throw new Error(`redis-benchmark printed no rate: ${stdout.slice(-300)}`);
      return Number(rate);
    }),
  );
  const cpuAfter = await mastersCpuSeconds(deployment);
  const cpuMs = (cpuAfter.user + cpuAfter.sys - cpuBefore.user - cpuBefore.sys) * 1000;
  return { perSecond: rates.reduce((a, b) => a + b, 0), cpuMsPerCall: cpuMs / (FLOOR_CALLS * tags.size) };
}

export function measureWrites(context: Pick<BenchContext, 'seconds'>): Step<WriteCost> {
  return async (deployment) => {
    const floor = await evalFloor(deployment);
    const seats = await seatRooms(deployment);
    const { processes } = deployment;
    const cpuBefore = await mastersCpuSeconds(deployment);
    const callsBefore = await commandCalls(deployment);
    const processCpuBefore = processes.map((p) => processCpuMs(p.child.pid!));
    const results = await Promise.all(processes.map((p, i) => chooseLoad(p.base, seats[i]!, context.seconds)));
    const cpuAfter = await mastersCpuSeconds(deployment);
    const redisCpuMs = (cpuAfter.user + cpuAfter.sys - cpuBefore.user - cpuBefore.sys) * 1000;
    const kernelShare = (cpuAfter.sys - cpuBefore.sys) / (redisCpuMs / 1000);
    const callsAfter = await commandCalls(deployment);
    const serviceCpuMs = processes.reduce((sum, p, i) => sum + processCpuMs(p.child.pid!) - processCpuBefore[i]!, 0);
    const acknowledged = results.reduce((sum, r) => sum + r['2xx'], 0);
    const refused = results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
    const perSecond = acknowledged / context.seconds;
    const figures: WriteCost = {
      writesPerSecond: perSecond,
      redisCpuMsPerWrite: redisCpuMs / acknowledged,
      serviceCpuMsPerWrite: serviceCpuMs / acknowledged,
      floorEvalsPerSecond: floor.perSecond,
      floorRedisCpuMsPerEval: floor.cpuMsPerCall,
    };
    // The commands a write costs the masters, most frequent first (the deployment's idle traffic included).
    const perWrite = [...callsAfter]
      .map(([command, calls]) => [command, (calls - (callsBefore.get(command) ?? 0)) / acknowledged] as const)
      .filter(([, calls]) => calls >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([command, calls]) => `${command} ${calls.toFixed(1)}`)
      .join(', ');
    const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    const p99 = Math.max(...results.map((r) => r.latency.p99));
    return {
      figures,
      rows: [
        {
          case: `${ROWS.evalFloor}, ${deployment.masters.length} masters`,
          rps: Math.round(floor.perSecond),
          note: `redis-benchmark, ${CONNECTIONS} clients a master, all masters at once; redis CPU ${us(floor.cpuMsPerCall)} a call`,
        },
        {
          case: `${ROWS.writes}, ${ROOMS} rooms, ${processes.length} processes`,
          rps: Math.round(perSecond),
          p50: Math.max(...results.map((r) => r.latency.p50)),
          p99,
          ratio: perSecond / floor.perSecond,
          errors: refused,
          note: `ratio = / the EVAL floor; ${CONNECTIONS} conn a process; per write: redis CPU ${us(figures.redisCpuMsPerWrite)} (${(figures.redisCpuMsPerWrite / floor.cpuMsPerCall).toFixed(1)}× the floor's call, ${Math.round(kernelShare * 100)} % in the kernel), service CPU ${us(figures.serviceCpuMsPerWrite)}; redis commands a write: ${perWrite}`,
        },
      ],
    };
  };
}
