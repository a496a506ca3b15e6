/**
 * Service CPU per `choose` call: REST, MCP 2026-07-28 and MCP 2025-11-25, the service in a child process
 * (so the load client's CPU is not counted), interleaved rounds of a fixed number of calls each; the
 * child's user+system time (/proc/PID/stat) over the calls of a case. Steadier than req/s on a shared
 * machine (docs/performance.md, MCP close to REST).
 *   npx tsx bench/mcp-cpu-per-call.ts            (CALLS per round, default 2000; ROUNDS default 4)
 *   CASES=1 CPU_PROF_DIR=/tmp/prof npx tsx bench/mcp-cpu-per-call.ts   (each child writes a CPU profile of the
 *   measured rounds only, without start-up and warm-up)
 *   SERVICES=/path/to/other/checkout,. npx tsx bench/mcp-cpu-per-call.ts   (A/B: one child per checkout,
 *   their rounds interleaved; each checkout's own bench/bench-service.ts starts its service)
 *   ROOMS=1000 CASES=3 npx tsx bench/mcp-cpu-per-call.ts   (a fourth case: REST `choose` spread over that
 *   many rooms, a commit per call as in the bench's 1,000-room rows; SEATS=20: each room that many seats)
 */
import { fork } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { createBenchRoom } from './bench-service.js';
import { type Case, chooseCases, chooseRoom, postJson } from './mcp-vs-rest.js';
import { processCpuMs } from './process-cpu.js';

const CALLS = Number(process.env.CALLS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const CONCURRENCY = 10;
const ROOMS = Number(process.env.ROOMS ?? 0);
const SEATS = Number(process.env.SEATS ?? 1);

async function serve(root: string): Promise<void> {
  const { startBenchService } = await import(pathToFileURL(path.resolve(root, 'bench/bench-service.ts')).href);
  const { service, base, dataDir } = await startBenchService();
  process.send!({ base });
  const session = new Session();
  process.on('message', async (command: string) => {
    if (command === 'profile') {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      process.send!('profiling');
      return;
    }
    if (process.env.CPU_PROF_DIR) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(
        path.join(process.env.CPU_PROF_DIR, `service-${process.pid}.cpuprofile`),
        JSON.stringify(profile),
      );
    }
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

/** The child's CPU time in µs. */
const cpuMicros = (pid: number): number => processCpuMs(pid) * 1000;

interface Target {
  label: string;
  pid: number;
  stop: () => Promise<unknown>;
  profile: () => Promise<unknown>;
  cases: Case[];
  pool: Pool;
}

/** One service child (the checkout at `root`), a room with CONCURRENCY voters, and the three cases against it. */
async function startTarget(root: string): Promise<Target> {
  const child = fork(fileURLToPath(import.meta.url), ['serve', root]);
  const base = await new Promise<string>((resolve) => child.once('message', (m: any) => resolve(m.base)));
  const pool = new Pool(base, { connections: CONCURRENCY, pipelining: 1 });
  const { slug, tokens } = await chooseRoom(base, CONCURRENCY);
  const allCases = chooseCases(slug, tokens);
  if (ROOMS > 0) allCases.push(await spreadCase(base));
  // CASES=1 (or 0,2): only those cases (for a profile of one transport).
  const only = process.env.CASES?.split(',').map(Number);
  const cases = only ? allCases.filter((_, k) => only.includes(k)) : allCases;
  return {
    label: root,
    pid: child.pid!,
    profile: async () => {
      child.send('profile');
      await new Promise((resolve) => child.once('message', resolve));
    },
    cases,
    pool,
    stop: async () => {
      await pool.close();
      child.send('stop');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** REST `choose` over ROOMS rooms of SEATS seats each, each call in the next room, by its next seat. */
async function spreadCase(base: string): Promise<Case> {
  const rooms: { slug: string; tokens: string[] }[] = [];
  const seated = async () => {
    const { slug, token } = await createBenchRoom(base);
    const tokens = [token];
    while (tokens.length < SEATS) {
      const joined = await postJson(base, `/api/rooms/${slug}/join`, { display_name: `seat-${tokens.length}` });
      tokens.push(joined.participant_token as string);
    }
    return { slug, tokens };
  };
  for (let i = 0; i < ROOMS; i += 20) {
    rooms.push(...(await Promise.all(Array.from({ length: Math.min(20, ROOMS - i) }, seated))));
  }
  return {
    name: `REST POST /choose, ${ROOMS} rooms of ${SEATS}`,
    requestFor: (_worker, i) => {
      const room = rooms[i % rooms.length]!;
      const token = room.tokens[Math.floor(i / rooms.length) % room.tokens.length]!;
      return {
        path: `/api/rooms/${room.slug}/choose`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ choice: i % 2 === 0 ? 'alpha' : 'beta' }),
      };
    },
    check: (status) => status === 200,
  };
}

async function run(target: Target, c: Target['cases'][number], calls: number) {
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const cpu0 = cpuMicros(target.pid);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      while (next < calls) {
        const i = next++;
        const response = await target.pool.request({ method: 'POST', ...c.requestFor(w, i) });
        const text = await response.body.text();
        if (!c.check(response.statusCode, text)) errors++;
      }
    }),
  );
  return { cpu: cpuMicros(target.pid) - cpu0, wall: performance.now() - started, errors };
}

async function main(): Promise<void> {
  const roots = (process.env.SERVICES ?? '.').split(',');
  const targets: Target[] = [];
  for (const root of roots) targets.push(await startTarget(root));
  for (const t of targets) for (const c of t.cases) await run(t, c, CALLS / 2);
  if (process.env.CPU_PROF_DIR) {
    await mkdir(process.env.CPU_PROF_DIR, { recursive: true });
    for (const t of targets) await t.profile();
  }
  const totals = targets.map((t) => t.cases.map(() => ({ cpu: 0, wall: 0, errors: 0 })));
  for (let r = 0; r < ROUNDS; r++)
    for (const [k, t] of targets.entries())
      for (const [j, c] of t.cases.entries()) {
        const result = await run(t, c, CALLS);
        const total = totals[k]![j]!;
        total.cpu += result.cpu;
        total.wall += result.wall;
        total.errors += result.errors;
      }
  const calls = CALLS * ROUNDS;
  console.log(`${calls} calls per case, ${CONCURRENCY} connections, ${ROUNDS} interleaved rounds`);
  console.table(
    targets.flatMap((t, k) => {
      const rest = totals[k]![0]!;
      return t.cases.map((c, j) => ({
        service: t.label,
        case: c.name,
        'CPU µs/call': Math.round(totals[k]![j]!.cpu / calls),
        'req/s': Math.round(calls / (totals[k]![j]!.wall / 1000)),
        'CPU ratio (first/this)': (rest.cpu / totals[k]![j]!.cpu).toFixed(2),
        'req/s ratio': (rest.wall / totals[k]![j]!.wall).toFixed(2),
        errors: totals[k]![j]!.errors,
      }));
    }),
  );
  for (const t of targets) await t.stop();
}

if (process.argv[2] === 'serve') await serve(process.argv[3] ?? '.');
else await main();
