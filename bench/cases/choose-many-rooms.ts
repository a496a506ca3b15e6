/**
 * `choose` spread over 1,000 rooms: every request a turn in a different room than the last, each
 * with a durable commit. On the embedded store this measures how commits of different rooms share
 * fsyncs (group commit); on Redis, the Lua commit round trips. Measured at BENCH_CONNECTIONS and at
 * 100 connections on the same service; each SQLite row's ratio is to the "POST + 1 durable insert"
 * floor taken at the same connection count in this case, the Redis rows' to the SQLite row.
 */
import { rm } from 'node:fs/promises';
import { startRedisServer } from '../../test/support/redis-server.js';
import { createBenchRoom, startBenchService } from '../bench-service.js';
import { type BenchCase, type BenchContext, type BenchRow, load, ratioTo } from '../table.js';
import { measureDurableFloor } from './floors.js';

const ROOMS = 1000;
const MANY_CONNECTIONS = 100;

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

async function chooseAcross(
  name: string,
  base: string,
  seats: Seat[],
  context: Pick<BenchContext, 'seconds' | 'connections'>,
): Promise<BenchRow> {
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

/** The connection counts of the case: the run's, and 100 beside it. */
function connectionCounts(context: BenchContext): number[] {
  return context.connections === MANY_CONNECTIONS ? [MANY_CONNECTIONS] : [context.connections, MANY_CONNECTIONS];
}

/** One service, 1,000 rooms, one row per connection count. */
async function measure(store: string, env: Record<string, string>, context: BenchContext): Promise<BenchRow[]> {
  const { service, base, dataDir } = await startBenchService(env);
  try {
    const seats = await createRooms(base, ROOMS);
    const rows: BenchRow[] = [];
    for (const connections of connectionCounts(context)) {
      const name = `choose, ${ROOMS} rooms (${store}), ${connections} conn`;
      rows.push(await chooseAcross(name, base, seats, { seconds: context.seconds, connections }));
    }
    return rows;
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export const chooseManyRooms: BenchCase = {
  id: 'many-rooms',
  async run(context) {
    const floors: BenchRow[] = [];
    for (const connections of connectionCounts(context)) {
      floors.push(
        await measureDurableFloor(`floor: POST + 1 durable insert, ${connections} conn`, false, {
          seconds: context.seconds,
          connections,
        }),
      );
    }
    const sqlite = await measure('sqlite', {}, context);
    const rows: BenchRow[] = [];
    for (const [i, row] of sqlite.entries()) {
      rows.push({ ...floors[i]!, note: 'the floor of the row below, same connections' });
      rows.push({ ...ratioTo(row, floors[i]!), note: 'ratio vs the durable-insert floor above (target ≥ 0.5)' });
    }
    const redis = await startRedisServer();
    if (redis === null) return [...rows, { case: `choose, ${ROOMS} rooms (redis)`, note: 'skipped: no redis-server' }];
    try {
      const viaRedis = await measure('redis', { STORE: 'redis', REDIS_URL: redis.url }, context);
      for (const [i, row] of viaRedis.entries()) {
        rows.push({ ...ratioTo(row, sqlite[i]!), note: 'ratio vs the sqlite row, same connections (target ≥ 0.9)' });
      }
    } finally {
      await redis.stop();
    }
    return rows;
  },
};
