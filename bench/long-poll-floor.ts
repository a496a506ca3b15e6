/**
 * The floor under bench/long-poll-10k.ts on this machine: a bare node:http server — no framework,
 * no room, one pre-serialized body shared by all — holds N parked GETs from a forked client process
 * and answers them all at once. It reports how long writing the N responses takes and when they
 * arrive, measured the same way (arrival minus the trigger instant).
 *   npx tsx bench/long-poll-floor.ts            (N=10000 by default)
 */
import { fork } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const N = Number(process.env.N ?? 10_000);
const preciseNow = () => performance.timeOrigin + performance.now();

if (process.env.FLOOR_ROLE === 'client') {
  const pool = new Pool(process.env.FLOOR_BASE!, {
    connections: N,
    pipelining: 1,
    keepAliveTimeout: 120_000,
    headersTimeout: 120_000,
  });
  const arrivals: number[] = [];
  const all: Promise<void>[] = [];
  for (let sent = 0; sent < N; sent += 250) {
    for (let i = sent; i < Math.min(sent + 250, N); i++) {
      all.push(
        pool.request({ method: 'GET', path: '/wait' }).then(async (response) => {
          await response.body.text();
          arrivals.push(preciseNow());
        }),
      );
    }
    await sleep(25);
  }
  process.send!({ sent: true });
  await Promise.all(all);
  process.send!({ arrivals });
  await pool.close();
} else {
  const parked: ServerResponse[] = [];
  const body = Buffer.from(JSON.stringify({ status: 'actionable', reason: 'completion', decision: { seq: 1 } }));
  const server = createServer((request, response) => {
    if (request.url === '/wait') parked.push(response);
    else response.end();
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const client = fork(process.argv[1]!, [], {
    env: { ...process.env, FLOOR_ROLE: 'client', FLOOR_BASE: base },
    execArgv: ['--import', 'tsx'],
  });
  const message = (key: string) =>
    new Promise<Record<string, unknown>>((resolve) =>
      client.on('message', (m: Record<string, unknown>) => {
        if (key in m) resolve(m);
      }),
    );
  await message('sent');
  while (parked.length < N) await sleep(50);
  await sleep(500);
  const trigger = preciseNow();
  for (const response of parked) {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  }
  const written = preciseNow() - trigger;
  const { arrivals } = (await message('arrivals')) as { arrivals: number[] };
  const latency = arrivals.map((at) => at - trigger).sort((a, b) => a - b);
  const at = (q: number) => latency[Math.ceil(q * latency.length) - 1]!.toFixed(0);
  console.log(
    `floor, ${N} parked GETs on bare node:http: all written in ${written.toFixed(0)} ms; ` +
      `arrival after the trigger p50 ${at(0.5)} / p99 ${at(0.99)} / max ${at(1)} ms`,
  );
  server.closeAllConnections();
  server.close();
  process.exit(0);
}
