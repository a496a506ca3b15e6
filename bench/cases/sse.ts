/**
 * 10,000 SSE streams on one room, one event to all, beside its floor in the same run: a bare
 * node:http server holding as many event streams from the same client process and writing one
 * pre-serialized frame to all of them. Both rows: each stream's arrival of the frame minus the
 * trigger instant (the service's commit notice; the floor's first write), from a forked client
 * process (bench/sse-client.ts). The service's streams hold the room creator's token, so each is
 * also re-checked against the committed state on the commit, as agents' streams are.
 *   BENCH_ONLY=sse npm run bench      (BENCH_SSE_STREAMS=10000 by default)
 */
import { fork } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startBenchService } from '../bench-service.js';
import type { BenchCase, BenchRow } from '../table.js';

const STREAMS = Number(process.env.BENCH_SSE_STREAMS ?? 10_000);
const preciseNow = () => performance.timeOrigin + performance.now();
const CLIENT = fileURLToPath(new URL('../sse-client.ts', import.meta.url));

interface Arrivals {
  arrivals: number[];
}

/** Forks the client on `url`; resolves once every stream is open, with a way to await the arrivals. */
async function openStreams(url: string, authorization?: string) {
  const child = fork(CLIENT, [], {
    env: {
      ...process.env,
      SSE_URL: url,
      SSE_STREAMS: String(STREAMS),
      ...(authorization ? { SSE_AUTHORIZATION: authorization } : {}),
    },
    execArgv: ['--import', 'tsx'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  child.on('message', (message: Record<string, unknown>) => {
    messages.push(message);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`sse client exited with ${code}`))),
  );
  const next = async (key: string) => {
    for (;;) {
      const found = messages.find((m) => key in m);
      if (found) return found;
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), exited]);
    }
  };
  const opened = (await next('opened')) as { opened: number; failed: number };
  if (opened.failed > 0) throw new Error(`${opened.failed} of ${STREAMS} streams did not open`);
  return {
    arrivals: async () => ((await next('arrivals')) as unknown as Arrivals).arrivals,
    close: () => {
      child.send({ close: true });
      child.removeAllListeners('exit');
    },
  };
}

function latencyRow(name: string, trigger: number, arrivals: number[], note: string): BenchRow {
  const latency = arrivals.map((at) => at - trigger).sort((a, b) => a - b);
  const at = (q: number) => latency[Math.min(latency.length - 1, Math.ceil(q * latency.length) - 1)]!;
  return { case: name, p50: at(0.5), p99: at(0.99), errors: STREAMS - arrivals.length, note };
}

async function floor(): Promise<BenchRow> {
  const streams: ServerResponse[] = [];
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    response.flushHeaders();
    streams.push(response);
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const client = await openStreams(`http://127.0.0.1:${port}/stream`);
    while (streams.length < STREAMS) await sleep(50);
    await sleep(500);
    const frame = Buffer.from(
      `id: evt_1\nevent: deliberation.message\ndata: ${JSON.stringify({ id: 'evt_1', seq: 1, event_type: 'deliberation.message', data: { body: 'One event to all.' } })}\n\n`,
    );
    const trigger = preciseNow();
    for (const response of streams) response.write(frame);
    const written = preciseNow() - trigger;
    if (process.env.BENCH_DEBUG) console.error(`sse floor: written to ${streams.length} streams`);
    const arrivals = await client.arrivals();
    client.close();
    return latencyRow(
      `floor: ${STREAMS} SSE streams, bare node:http`,
      trigger,
      arrivals,
      `one frame written to all in ${written.toFixed(0)} ms`,
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

async function service(): Promise<BenchRow> {
  const { service, base, dataDir } = await startBenchService({ MAX_PARKED_CONNECTIONS: String(STREAMS * 2) });
  const api = async (url: string, token: string | undefined, body: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, any>;
  };
  try {
    const room = await api('/api/rooms', undefined, { question: 'Stream to everyone?', options: ['yes', 'no'] });
    const { slug, creator_token: token } = room as { slug: string; creator_token: string };
    const client = await openStreams(`${base}/api/rooms/${slug}/events/stream`, `Bearer ${token}`);
    while (service.engagement.streams.size < STREAMS) await sleep(50);
    await sleep(500);
    let trigger = 0;
    const stop = service.engagement.bus.listen(slug, () => {
      trigger ||= preciseNow();
    });
    const posted = await api(`/api/rooms/${slug}/discuss`, token, { body: 'One event to all.' });
    if (!posted.ok && posted.error) throw new Error(`discuss refused: ${JSON.stringify(posted)}`);
    const arrivals = await client.arrivals();
    stop();
    client.close();
    const heap = process.memoryUsage().heapUsed / 2 ** 20;
    return latencyRow(
      `${STREAMS} SSE streams, one event to all`,
      trigger,
      arrivals,
      `commit notice to arrival; heap ${heap.toFixed(0)} MiB`,
    );
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export const sse: BenchCase = {
  id: 'sse',
  async run() {
    const bare = await floor();
    const streams = await service();
    const ratio = streams.p99 !== undefined && bare.p99 ? streams.p99 / bare.p99 : undefined;
    return [
      bare,
      { ...streams, ratio, note: `p99 ratio vs the floor row (lower is better; target ≤ 1.2); ${streams.note}` },
    ];
  },
};
