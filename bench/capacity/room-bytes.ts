/**
 * ROOM BYTES, today's stand-in (bench/capacity/inputs.ts): typical rooms (10 members, 5 decided
 * decisions, 45 messages) built through the service processes, then MEMORY USAGE summed over the
 * deployment's keys before and after, once while the rooms are live and once after they are closed
 * (concluded).
 *   BENCH_CAPACITY_TYPICAL_ROOMS (20)
 */
import { Redis } from 'ioredis';
import { apiFor, type Deployment, inParallel, KEY_PREFIX, sumOverMasters } from './deployment.js';
import { ROWS, type RoomBytes, type Step } from './inputs.js';

const ROOMS = Number(process.env.BENCH_CAPACITY_TYPICAL_ROOMS ?? 20);
const MEMBERS = 10;
const DECISIONS = 5;
const MESSAGES = 45;

interface TypicalRoom {
  slug: string;
  creatorToken: string;
  base: string;
}

/** One typical room, every call on one process (as nginx's room affinity sends them). */
async function buildTypicalRoom(base: string, index: number): Promise<TypicalRoom> {
  const api = apiFor(base);
  const room = await api('POST', '/api/rooms', undefined, {
    question: 'Decision 1?',
    options: ['alpha', 'beta'],
    config: { type: 'persistent', early_close: true, settle_window: 0, voting_window: 1_209_600 },
  });
  const slug = room.slug as string;
  const tokens: string[] = [room.creator_token];
  for (let m = 1; m < MEMBERS; m++) {
    tokens.push(
      (await api('POST', `/api/rooms/${slug}/join`, undefined, { display_name: `member ${m}` })).participant_token,
    );
  }
  for (let d = 0; d < DECISIONS; d++) {
    if (d > 0)
      await api('POST', `/api/rooms/${slug}/ask`, tokens[0], {
        question: `Decision ${d + 1}?`,
        options: ['alpha', 'beta'],
      });
    for (let i = 0; i < MESSAGES / DECISIONS; i++) {
      const said = d * (MESSAGES / DECISIONS) + i;
      await api('POST', `/api/rooms/${slug}/discuss`, tokens[said % MEMBERS], {
        body: `room ${index}, message ${said}`,
      });
    }
    // Split until the last vote (5 to 4, then alpha): with early_close the decision stays open for all ten.
    for (const [m, token] of tokens.entries()) {
      await api('POST', `/api/rooms/${slug}/choose`, token, {
        choice: m % 2 === 0 || m === MEMBERS - 1 ? 'alpha' : 'beta',
      });
    }
  }
  return { slug, creatorToken: tokens[0]!, base };
}

/** MEMORY USAGE (exact: SAMPLES 0) summed over the keys `pattern` matches on one node. */
async function keyBytes(port: number, pattern: string): Promise<number> {
  const node = new Redis(port, '127.0.0.1');
  try {
    let total = 0;
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) total += Number((await node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    } while (cursor !== '0');
    return total;
  } finally {
    node.disconnect();
  }
}

/** Every key of the deployment, on every master. */
async function allKeyBytes(deployment: Deployment): Promise<number> {
  let total = 0;
  for (const port of deployment.masters) total += await keyBytes(port, `${KEY_PREFIX}*`);
  return total;
}

/** The room's own keys (its `{slug}` hash tag), on the master serving that slot. */
async function ownKeyBytes(deployment: Deployment, slug: string): Promise<number> {
  return keyBytes(await deployment.cluster.masterOf(`{${slug}}`), `${KEY_PREFIX}*{${slug}}*`);
}

const dataset = (deployment: Deployment) => sumOverMasters(deployment, 'memory', ['used_memory_dataset']);

async function sumOver(rooms: TypicalRoom[], bytes: (room: TypicalRoom) => Promise<number>): Promise<number> {
  let total = 0;
  for (const room of rooms) total += await bytes(room);
  return total;
}

/**
 * The figures are every key's MEMORY USAGE grown per room: the room's own keys, its members' token
 * keys and its share of the log. The notes add the room's own keys alone, and the masters'
 * `used_memory_dataset` grown per room (the allocator's view; the replication backlog and client
 * buffers, which a fresh cluster grows into, are outside it).
 */
export const measureRoomBytesToday: Step<RoomBytes> = async (deployment) => {
  const before = { keys: await allKeyBytes(deployment), dataset: await dataset(deployment) };
  const rooms: TypicalRoom[] = [];
  const { processes } = deployment;
  await inParallel(ROOMS, processes.length * 2, async (i) => {
    rooms.push(await buildTypicalRoom(processes[i % processes.length]!.base, i));
  });
  const perRoom = (bytes: number) => bytes / rooms.length;
  const ownLive = perRoom(await sumOver(rooms, (room) => ownKeyBytes(deployment, room.slug)));
  const live = perRoom((await allKeyBytes(deployment)) - before.keys);
  for (const room of rooms) await apiFor(room.base)('POST', `/api/rooms/${room.slug}/close`, room.creatorToken, {});
  const ownConcluded = perRoom(await sumOver(rooms, (room) => ownKeyBytes(deployment, room.slug)));
  const concluded = perRoom((await allKeyBytes(deployment)) - before.keys);
  const allocated = perRoom((await dataset(deployment)) - before.dataset);
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const shape = `${MEMBERS} members, ${DECISIONS} decided, ${MESSAGES} messages`;
  return {
    figures: { liveBytesPerRoom: live, concludedBytesPerRoom: concluded },
    rows: [
      {
        case: ROWS.liveRoom,
        note: `${kib(live)}: every key's MEMORY USAGE grown per room over ${rooms.length} rooms (${shape}); the room's own keys ${kib(ownLive)}`,
      },
      {
        case: ROWS.concludedRoom,
        ratio: concluded / live,
        note: `${kib(concluded)} once closed (ratio = / live); the room's own keys ${kib(ownConcluded)}; the masters' used_memory_dataset grew ${kib(allocated)} a room`,
      },
    ],
  };
};
