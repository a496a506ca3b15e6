/**
 * A reconnect storm of long-polls: 10,000 `for=completion` long-polls on one room in one burst from one
 * client, all woken by one commit (the deciding choice seals the decision), beside its floor in the
 * same run: a bare node:http server taking the same burst from the same client, holding every GET and
 * answering all with one pre-serialized body; and a third row, the same floor answering with the
 * service's own headers and body (read from the service after its burst), so the table shows what the
 * answer's bytes cost this machine apart from the service's work. Every row: how many of the burst were
 * served (woken), how many were answered 408 (must be none), and each answer's arrival minus the
 * trigger instant (the service's commit notice; the floor's first write), from a forked client
 * (bench/burst-client.ts).
 * bench/long-poll-10k.ts measures the same wake with the process's memory, opened gradually.
 *   BENCH_ONLY=long-polls npm run bench      (BENCH_BURST=10000 by default)
 */
import { rm } from 'node:fs/promises';
import { createServer, get, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LISTEN_BACKLOG } from '../../src/http/app.js';
import { apiFor, startBenchService } from '../bench-service.js';
import { againstFloor, BURST, burstRow, preciseNow, startBurst } from '../burst.js';
import type { BenchCase, BenchRow } from '../table.js';

/** How long the burst may take to park before the case gives up on the ones still missing. */
const PARK_DEADLINE_MS = 120_000;

/** Waits until `parked()` holds the whole burst, or the deadline (a 408'd request never parks). */
async function parkedAll(parked: () => number): Promise<number> {
  const started = performance.now();
  while (parked() < BURST && performance.now() - started < PARK_DEADLINE_MS) await sleep(50);
  return (performance.now() - started) / 1000;
}

/** What a floor answers every parked GET with: its status line's headers and body. */
interface FloorAnswer {
  headers: [string, string][];
  body: Buffer;
}

const BARE: FloorAnswer = {
  headers: [['content-type', 'application/json']],
  body: Buffer.from(JSON.stringify({ status: 'actionable', reason: 'completion', decision: { seq: 1 } })),
};

/**
 * A bare node:http server taking the burst and answering every parked GET with `answer` in one loop:
 * with the two-header reply, the floor of the case; with the service's own headers and body (the
 * same-bytes row), what answering those bytes costs this machine before any of the service's work.
 */
async function floor(name: string, answer: FloorAnswer = BARE): Promise<BenchRow> {
  const parked: ServerResponse[] = [];
  const { body } = answer;
  const server = createServer((_request, response) => {
    parked.push(response);
  });
  server.keepAliveTimeout = 120_000;
  // The service's listen backlog, so both take the burst through the same accept queue.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: LISTEN_BACKLOG }, resolve));
  const { port } = server.address() as { port: number };
  try {
    const burst = startBurst(`http://127.0.0.1:${port}/wait`, 'long-poll');
    const parkSeconds = await parkedAll(() => parked.length);
    await sleep(500);
    const trigger = preciseNow();
    for (const response of parked) {
      response.writeHead(200, [...answer.headers.flat(), 'content-length', String(body.length)]);
      response.end(body);
    }
    const written = preciseNow() - trigger;
    const { arrivals, tally } = await burst.arrivals();
    burst.close();
    return burstRow(
      name,
      trigger,
      arrivals,
      tally,
      `all parked in ${parkSeconds.toFixed(1)} s; answered all in ${written.toFixed(0)} ms`,
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Headers Node's server writes itself on every answer (the floor's too): not copied into the same-bytes floor. */
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** One answer of the service as the woken long-polls got it (status 200): its headers in order and its body. */
function answerOf(url: string, authorization: string): Promise<FloorAnswer> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { authorization } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        if (response.statusCode !== 200) return reject(new Error(`the service answered ${response.statusCode}`));
        const headers: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i]!.toLowerCase();
          if (!NODE_OWN.has(name)) headers.push([name, response.rawHeaders[i + 1]!]);
        }
        resolve({ headers, body: Buffer.concat(chunks) });
      });
    }).on('error', reject);
  });
}

async function service(): Promise<{ row: BenchRow; answer: FloorAnswer }> {
  const { service, base, dataDir } = await startBenchService({ MAX_PARKED_CONNECTIONS: String(BURST * 2) });
  const api = apiFor(base);
  try {
    const room = await api('POST', '/api/rooms', undefined, {
      question: 'Wake everyone?',
      options: ['yes', 'no'],
      config: { early_close: true, settle_window: 0 },
    });
    const { slug, creator_token: creator } = room as { slug: string; creator_token: string };
    const other = (await api('POST', `/api/rooms/${slug}/join`, undefined, {})).participant_token as string;
    await api('POST', `/api/rooms/${slug}/choose`, creator, { choice: 'yes' });
    const burst = startBurst(
      `${base}/api/rooms/${slug}/next-action?for=completion&wait=50`,
      'long-poll',
      `Bearer ${creator}`,
    );
    const parkSeconds = await parkedAll(() => service.engagement.waiters.parked);
    await sleep(500);
    let trigger = 0;
    const stop = service.engagement.bus.listen(slug, () => {
      trigger ||= preciseNow();
    });
    const deciding = await api('POST', `/api/rooms/${slug}/choose`, other, { choice: 'yes' });
    if (deciding.status !== 'resolved')
      throw new Error(`the deciding choice did not seal: ${JSON.stringify(deciding)}`);
    const { arrivals, tally } = await burst.arrivals();
    stop();
    burst.close();
    const row = burstRow(
      `${BURST} long-polls in one burst, one commit wakes all`,
      trigger,
      arrivals,
      tally,
      `all parked in ${parkSeconds.toFixed(1)} s; commit notice to answer`,
    );
    // The same call answered at once: the status, headers and body every woken long-poll received.
    const answer = await answerOf(`${base}/api/rooms/${slug}/next-action?for=completion&wait=0`, `Bearer ${creator}`);
    return { row, answer };
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export const longPolls: BenchCase = {
  id: 'long-polls',
  async run() {
    const bare = await floor(`floor: ${BURST} long-polls in one burst, bare node:http`);
    const { row, answer } = await service();
    const sameBytes = await floor(
      `floor with the service's bytes: ${answer.headers.length} headers, ${answer.body.length} B body`,
      answer,
    );
    return [bare, againstFloor(row, bare), againstFloor(sameBytes, bare, "the service's bytes alone")];
  },
};
