/**
 * NOTICES (bench/capacity/inputs.ts): commit notices each service process receives, against the
 * commits made, with notices on per-room sharded channels (docs/architecture.md, Engagement: commit
 * notices). BENCH_CAPACITY_NOTICE_ROOMS rooms (200) spread over the Cluster's slots; the rooms are
 * dealt in quarters and process p (of the deployment's three) holds one SSE stream on each room of
 * quarter p, so it subscribes to that quarter's channels only; the last quarter is waited on by
 * nobody. Then `discuss` commits spread over every room, each made on the next process over from the
 * room's quarter, so every process writes. Each process's own /metrics
 * (`conclave_commit_notices_received_total`) counts what it heard. The design before this one
 * delivered every commit to every process (ratio 1.0); a subscriber on that broadcast channel counts
 * what it hears now, nothing unless COMMIT_NOTICES=both.
 *   BENCH_CAPACITY_NOTICE_ROOMS (200), BENCH_CAPACITY_COMMITS (2000)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { type Deployment, inParallel, KEY_PREFIX } from './deployment.js';
import { apiFor } from '../bench-service.js';
import { type NoticeLoad, ROWS, type Step } from './inputs.js';

const ROOMS = Number(process.env.BENCH_CAPACITY_NOTICE_ROOMS ?? 200);
const COMMITS = Number(process.env.BENCH_CAPACITY_COMMITS ?? 2000);
const QUARTERS = 4;
const GIVE_UP_MS = 60_000;

/** One of the process's own /metrics figures (summed over its label sets that match `labels`). */
async function metric(base: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let total = 0;
  for (const [, value] of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*${labels}[^}]*\\})? ([0-9.e+]+)$`, 'gm'))) {
    total += Number(value);
  }
  return total;
}

const noticesHeard = (base: string) => metric(base, 'conclave_commit_notices_received_total', 'channel="room"');
const roomsSubscribed = (base: string) => metric(base, 'conclave_commit_notice_rooms');

/**
 * An SSE stream held open, its frames read and dropped, until `signal` aborts it; false if it was
 * refused or ended before that (the wait for subscriptions then gives up, naming the count).
 */
async function holdStream(url: string, token: string, signal: AbortSignal): Promise<boolean> {
  try {
    const response = await fetch(url, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
      signal,
    });
    if (response.status !== 200) return false;
    for await (const _ of response.body!) {
      // Read so the service's writes never back up.
    }
    return signal.aborted;
  } catch {
    return signal.aborted;
  }
}

async function until(condition: () => Promise<boolean>, what: () => string): Promise<void> {
  const giveUpAt = Date.now() + GIVE_UP_MS;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`${what()} did not happen within ${GIVE_UP_MS} ms`);
    await sleep(100);
  }
}

export const measureNotices: Step<NoticeLoad> = async (deployment: Deployment) => {
  const { processes } = deployment;
  const quarter = (room: number) => room % QUARTERS;
  const rooms: { slug: string; token: string }[] = [];
  await inParallel(ROOMS, 20, async (i) => {
    const base = processes[quarter(i) % processes.length]!.base;
    const room = await apiFor(base)('POST', '/api/rooms', undefined, { about: `notices ${i}` });
    rooms[i] = { slug: room.slug, token: room.creator_token };
  });
  const waiter = (room: number) => (quarter(room) < processes.length ? processes[quarter(room)]! : undefined);
  const held = processes.map((_, p) => rooms.filter((_, i) => quarter(i) === p).length);
  const before = await Promise.all(processes.map((p) => roomsSubscribed(p.base)));
  const streams = new AbortController();
  let lost = 0;
  const holding = rooms.flatMap((room, i) => {
    const at = waiter(i);
    if (!at) return [];
    const stream = holdStream(`${at.base}/api/rooms/${room.slug}/events/stream`, room.token, streams.signal);
    return [stream.then((held) => void (held || lost++))];
  });
  const broadcast = new Cluster(deployment.cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  let broadcastHeard = 0;
  broadcast.on('message', () => {
    broadcastHeard++;
  });
  try {
    await broadcast.subscribe(`${KEY_PREFIX}commits`);
    // Count from a quiet start: every stream's room subscribed by its process (and nothing lingering).
    await until(
      async () =>
        (await Promise.all(processes.map((p) => roomsSubscribed(p.base)))).every((n, p) => n === held[p]! + before[p]!),
      () => `every stream subscribing its room (${lost} streams refused or ended)`,
    );
    await sleep(500);
    const heardBefore = await Promise.all(processes.map((p) => noticesHeard(p.base)));
    const started = performance.now();
    await inParallel(COMMITS, 20, async (c) => {
      const i = c % rooms.length;
      const api = apiFor(processes[(quarter(i) + 1) % processes.length]!.base);
      await api('POST', `/api/rooms/${rooms[i]!.slug}/discuss`, rooms[i]!.token, { body: `commit ${c}` });
    });
    const seconds = (performance.now() - started) / 1000;
    // Notices still on their way when the last answer came back.
    await sleep(500);
    if (lost > 0) throw new Error(`${lost} streams ended during the commits`);
    const heard = (await Promise.all(processes.map((p) => noticesHeard(p.base)))).map((n, p) => n - heardBefore[p]!);
    const busiest = Math.max(...heard);
    const figures: NoticeLoad = {
      commitsPerSecond: COMMITS / seconds,
      noticesPerProcessPerSecond: busiest / seconds,
    };
    const perProcess = heard.map((n, p) => `process ${p + 1}: ${n} (${(n / COMMITS).toFixed(3)})`).join(', ');
    return {
      figures,
      rows: [
        {
          case: `${ROWS.notices}, ${processes.length} processes, ${ROOMS} rooms`,
          rps: Math.round(figures.noticesPerProcessPerSecond),
          ratio: busiest / COMMITS,
          note:
            `${COMMITS} commits (${Math.round(figures.commitsPerSecond)} a second) over all rooms from all processes; ` +
            `each process holds an SSE stream on each room of its quarter, the last quarter nobody's; ` +
            `notices heard (÷ commits) ${perProcess}; rps and ratio = the busiest. ` +
            `The broadcast design delivered every commit to every process: ${COMMITS} each (ratio 1.0); ` +
            `its channel carried ${broadcastHeard} now`,
        },
      ],
    };
  } finally {
    streams.abort();
    await Promise.allSettled(holding);
    broadcast.disconnect();
  }
};
