/**
 * A reconnect storm of SSE streams: 10,000 streams opened on one room in one burst from one client
 * (what a restart or a network blip produces), then one event to all, beside its floor in the same
 * run: a bare node:http server taking the same burst from the same client and writing one
 * pre-serialized frame to all of them. Both rows: how many of the burst were served (got the event),
 * how many were answered 408 (must be none: the service never times out a request it was sent
 * whole), and each stream's arrival of the frame minus the trigger instant (the service's commit
 * notice; the floor's first write), from a forked client process (bench/burst-client.ts). The
 * service's streams hold the room creator's token, so each is also re-checked against the committed
 * state on the commit, as agents' streams are.
 *   BENCH_ONLY=sse npm run bench      (BENCH_BURST=10000 by default)
 */
import { rm } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { LISTEN_BACKLOG } from '../../src/http/app.js';
import { apiFor, startBenchService } from '../bench-service.js';
import { againstFloor, BURST, burstRow, preciseNow, startBurst } from '../burst.js';
import type { BenchCase, BenchRow } from '../table.js';

async function floor(): Promise<BenchRow> {
  const streams: ServerResponse[] = [];
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    response.flushHeaders();
    streams.push(response);
  });
  server.keepAliveTimeout = 120_000;
  // The service's listen backlog, so both take the burst through the same accept queue.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, resolve));
  const { port } = server.address() as { port: number };
  try {
    const burst = startBurst(`http://127.0.0.1:${port}/stream`, 'stream');
    const settled = await burst.settled();
    while (streams.length < settled.opened) await sleep(50);
    await sleep(500);
    const frame = Buffer.from(
      `id: evt_1\nevent: deliberation.message\ndata: ${JSON.stringify({ id: 'evt_1', seq: 1, event_type: 'deliberation.message', data: { body: 'One event to all.' } })}\n\n`,
    );
    const trigger = preciseNow();
    for (const response of streams) response.write(frame);
    const written = preciseNow() - trigger;
    const { arrivals, tally } = await burst.arrivals();
    burst.close();
    return burstRow(
      `floor: ${BURST} SSE streams in one burst, bare node:http`,
      trigger,
      arrivals,
      tally,
      `one frame written to all in ${written.toFixed(0)} ms`,
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

async function service(): Promise<BenchRow> {
  const { service, base, dataDir } = await startBenchService({ MAX_PARKED_CONNECTIONS: String(BURST * 2) });
  const api = apiFor(base);
  try {
    const room = await api('POST', '/api/rooms', undefined, {
      question: 'Stream to everyone?',
      options: ['yes', 'no'],
    });
    const { slug, creator_token: token } = room as { slug: string; creator_token: string };
    const opening = preciseNow();
    const burst = startBurst(`${base}/api/rooms/${slug}/events/stream`, 'stream', `Bearer ${token}`);
    const settled = await burst.settled();
    const openSeconds = (preciseNow() - opening) / 1000;
    while (service.engagement.streams.size < settled.opened) await sleep(50);
    await sleep(500);
    let trigger = 0;
    const stop = service.engagement.bus.listen(slug, () => {
      trigger ||= preciseNow();
    });
    const posted = await api('POST', `/api/rooms/${slug}/discuss`, token, { body: 'One event to all.' });
    if (!posted.ok && posted.error) throw new Error(`discuss refused: ${JSON.stringify(posted)}`);
    const { arrivals, tally } = await burst.arrivals();
    stop();
    burst.close();
    const heap = process.memoryUsage().heapUsed / 2 ** 20;
    return burstRow(
      `${BURST} SSE streams in one burst, one event to all`,
      trigger,
      arrivals,
      tally,
      `all open in ${openSeconds.toFixed(1)} s; commit notice to arrival; heap ${heap.toFixed(0)} MiB`,
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
    return [bare, againstFloor(await service(), bare)];
  },
};
