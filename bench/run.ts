/**
 * Benchmarks on loopback, each against a bare-fastify baseline measured in the same run:
 * `choose` (a revision on an open decision: one room turn with a durable SQLite commit), the agent
 * view read, and process start-up time. Bounded: a few seconds per case.
 *   npm run bench            (BENCH_SECONDS=5 by default)
 */
import { startBenchService } from './bench-service.js';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 10;

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(name: string, options: autocannon.Options): Promise<Result> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  return {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function baseline(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify({ logger: false });
  app.post('/choose', async (request) => ({ ok: true, echo: request.body }));
  app.get('/read', async () => ({ ok: true }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

async function startupMs(dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('conclave listening')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  const elapsed = performance.now() - started;
  child.kill('SIGKILL');
  return Math.round(elapsed);
}

async function main(): Promise<void> {
  const { service, base, dataDir } = await startBenchService();
  const created = (await (
    await fetch(`${base}/api/rooms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        question: 'Benchmark?',
        options: ['alpha', 'beta'],
        config: { voting_window: 1_209_600 },
      }),
    })
  ).json()) as { slug: string; creator_token: string };
  const token = created.creator_token as string;
  const bare = await baseline();

  const results: Result[] = [];
  const body = JSON.stringify({ choice: 'alpha' });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  results.push(await load('bare fastify POST', { url: `${bare.url}/choose`, method: 'POST', headers, body }));
  results.push(
    await load('conclave POST /choose', {
      url: `${base}/api/rooms/${created.slug}/choose`,
      method: 'POST',
      headers,
      body,
    }),
  );
  results.push(await load('bare fastify GET', { url: `${bare.url}/read` }));
  results.push(await load('conclave GET agent view', { url: `${base}/api/rooms/${created.slug}`, headers }));
  await bare.close();
  await service.close();

  const startup = await startupMs(path.join(dataDir, 'startup'));
  await rm(dataDir, { recursive: true, force: true });

  console.log(`\n${SECONDS}s per case, ${CONNECTIONS} connections, loopback, node ${process.version}`);
  console.log('case'.padEnd(28), 'req/s'.padStart(8), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'errors'.padStart(8));
  for (const r of results) {
    console.log(
      r.name.padEnd(28),
      String(r.rps).padStart(8),
      String(r.p50).padStart(8),
      String(r.p99).padStart(8),
      String(r.errors).padStart(8),
    );
  }
  console.log(
    `choose vs bare POST: ${(results[1]!.rps / results[0]!.rps).toFixed(3)}; read vs bare GET: ${(results[3]!.rps / results[2]!.rps).toFixed(3)}`,
  );
  console.log(`start-up to listening (tsx, cold): ${startup} ms`);
}

await main();
