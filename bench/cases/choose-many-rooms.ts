/**
 * `choose` spread over 1,000 rooms: every request a turn in a different room than the last, each
 * with a durable commit. On the embedded store this measures how commits of different rooms share
 * fsyncs (group commit); on Redis, the Lua commit round trips.
 */
import { rm } from 'node:fs/promises';
import { startRedisServer } from '../../test/support/redis-server.js';
import { createBenchRoom, startBenchService } from '../bench-service.js';
import { type BenchCase, type BenchContext, type BenchRow, load, ratioTo } from '../table.js';

const ROOMS = 1000;

interface Seat {
  slug: string;
  token: string;
}

async function createRooms(base: string, count: number): Promise<Seat[]> {
  const seats: Seat[] = [];
  // A few at a time: creation is not what this case measures.
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, count - i) }, () => createBenchRoom(base)));
    seats.push(...batch);
  }
  return seats;
}

async function chooseAcross(name: string, base: string, seats: Seat[], context: BenchContext): Promise<BenchRow> {
  let next = 0;
  return load(
    name,
    {
      url: base,
      requests: [
        {
          method: 'POST',
          setupRequest: (request) => {
            const seat = seats[next++ % seats.length]!;
            return {
              ...request,
              path: `/api/rooms/${seat.slug}/choose`,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${seat.token}` },
              body: JSON.stringify({ choice: next % 2 === 0 ? 'alpha' : 'beta' }),
            };
          },
        },
      ],
    },
    context,
  );
}

async function measure(name: string, env: Record<string, string>, context: BenchContext): Promise<BenchRow> {
  const { service, base, dataDir } = await startBenchService(env);
  try {
    const seats = await createRooms(base, ROOMS);
    return await chooseAcross(name, base, seats, context);
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export const chooseManyRooms: BenchCase = {
  id: 'many-rooms',
  async run(context) {
    const sqlite = await measure(`choose, ${ROOMS} rooms (sqlite)`, {}, context);
    const rows: BenchRow[] = [{ ...ratioTo(sqlite, context.baselines.post), note: 'ratio vs bare POST' }];
    const redis = await startRedisServer();
    if (redis === null) return [...rows, { case: `choose, ${ROOMS} rooms (redis)`, note: 'skipped: no redis-server' }];
    try {
      const viaRedis = await measure(
        `choose, ${ROOMS} rooms (redis)`,
        { STORE: 'redis', REDIS_URL: redis.url },
        context,
      );
      rows.push({ ...ratioTo(viaRedis, sqlite), note: 'ratio vs the sqlite row' });
    } finally {
      await redis.stop();
    }
    return rows;
  },
};
