/**
 * NOTICES, today's stand-in (bench/capacity/inputs.ts): `discuss` commits spread over rooms and
 * processes, while a subscriber on the deployment's commit channel counts what it hears. Every
 * service process subscribes to that one channel (engagement/redis-fanout.ts), so what this
 * subscriber hears is what each process receives, whichever rooms it serves.
 *   BENCH_CAPACITY_COMMITS (2000)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { apiFor, inParallel, KEY_PREFIX } from './deployment.js';
import { type NoticeLoad, ROWS, type Step } from './inputs.js';

const COMMITS = Number(process.env.BENCH_CAPACITY_COMMITS ?? 2000);
const ROOMS = 30;

export const measureNoticesToday: Step<NoticeLoad> = async (deployment) => {
  const { processes } = deployment;
  const rooms = await Promise.all(
    Array.from({ length: ROOMS }, async (_, i) => {
      const base = processes[i % processes.length]!.base;
      const room = await apiFor(base)('POST', '/api/rooms', undefined, { about: `notices ${i}` });
      return { api: apiFor(base), slug: room.slug as string, token: room.creator_token as string };
    }),
  );
  const subscriber = new Cluster(deployment.cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  let heard = 0;
  subscriber.on('message', () => {
    heard++;
  });
  try {
    await subscriber.subscribe(`${KEY_PREFIX}commits`);
    const started = performance.now();
    await inParallel(COMMITS, 20, async (i) => {
      const room = rooms[i % ROOMS]!;
      await room.api('POST', `/api/rooms/${room.slug}/discuss`, room.token, { body: `commit ${i}` });
    });
    const seconds = (performance.now() - started) / 1000;
    // Notices still on their way when the last answer came back.
    await sleep(500);
    const figures: NoticeLoad = { commitsPerSecond: COMMITS / seconds, noticesPerProcessPerSecond: heard / seconds };
    return {
      figures,
      rows: [
        {
          case: `${ROWS.notices}, ${processes.length} processes`,
          rps: Math.round(figures.noticesPerProcessPerSecond),
          ratio: heard / COMMITS,
          note: `${heard} notices heard for ${COMMITS} commits (${Math.round(figures.commitsPerSecond)} a second; ratio = notices / commits): every process hears every commit`,
        },
      ],
    };
  } finally {
    subscriber.disconnect();
  }
};
