/**
 * ROOM BYTES (bench/capacity/inputs.ts): Redis bytes of a typical room (10 members, 5 decided
 * decisions, 45 messages), live and concluded, concluded rooms stored compact (docs/architecture.md,
 * Storage, "Compact rooms"). Typical rooms built through the service processes, then closed and
 * compacted, MEMORY USAGE summed over the deployment's keys at each stage; and the masters'
 * used_memory over many copies of one such room (bench/redis-room-bytes.ts), the figure the
 * arithmetic takes.
 *   BENCH_CAPACITY_TYPICAL_ROOMS (20), BENCH_CAPACITY_MANY_ROOMS (10,000)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openRedisStore } from '../../src/store/redis-store.js';
import { measureRoomBytes as measureRoomBytesAtScale } from '../redis-room-bytes.js';
import { type Deployment, inParallel, KEY_PREFIX } from './deployment.js';
import { apiFor } from '../bench-service.js';
import { ROWS, type RoomBytes, type Step } from './inputs.js';

const ROOMS = Number(process.env.BENCH_CAPACITY_TYPICAL_ROOMS ?? 20);
const MANY = Number(process.env.BENCH_CAPACITY_MANY_ROOMS ?? 10_000);
const count = (n: number) => n.toLocaleString('en');
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

async function sumOver(rooms: TypicalRoom[], bytes: (room: TypicalRoom) => Promise<number>): Promise<number> {
  let total = 0;
  for (const room of rooms) total += await bytes(room);
  return total;
}

/**
 * Compacts each room as the deployment's processes would once it has been idle
 * REDIS_COMPACT_AFTER_SECONDS; returns how many attempts found the room locked (or written) since their read.
 */
async function compactAll(deployment: Deployment, rooms: TypicalRoom[]): Promise<number> {
  const store = await openRedisStore({ url: deployment.cluster.url, cluster: true, keyPrefix: KEY_PREFIX });
  let raced = 0;
  try {
    for (const room of rooms) {
      // The process that closed the room keeps its lock a moment (a lingering lease, store/redis-room-lease.ts)
      // and compaction leaves a locked room alone: try again once it lapses, as the sweep would.
      let outcome = await store.compactRoom(room.slug, 0);
      for (let attempt = 1; outcome === 'raced' && attempt < 50; attempt++) {
        raced++;
        await sleep(100);
        outcome = await store.compactRoom(room.slug, 0);
      }
      if (outcome !== 'compacted') throw new Error(`room ${room.slug} did not compact: ${outcome}`);
    }
    return raced;
  } finally {
    await store.close();
  }
}

/** Deletes every key under `prefix` on every master (the many-room copies, so later steps meet the deployment's data only). */
async function dropPrefix(deployment: Deployment, prefix: string): Promise<void> {
  for (const port of deployment.masters) {
    const node = new Redis(port, '127.0.0.1');
    try {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        // One slot per command on a Cluster node: unlink key by key, pipelined.
        if (keys.length > 0) await Promise.all(keys.map((key) => node.unlink(key)));
      } while (cursor !== '0');
    } finally {
      node.disconnect();
    }
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/**
 * Two measurements. On the deployment's own rooms: every key's MEMORY USAGE grown per room (the
 * room's own keys, its members' token keys, its share of the log) live, closed, and compacted (as the
 * processes do after REDIS_COMPACT_AFTER_SECONDS idle; here at once). Then, on the same Cluster under
 * its own key prefix, bench/redis-room-bytes.ts over BENCH_CAPACITY_MANY_ROOMS copies of one typical
 * room: the masters' used_memory grown per room, live and compacted, which counts what MEMORY USAGE
 * leaves out (the keyspace's own dictionaries, the allocator's rounding). The copies are the room's
 * own keys only, so the arithmetic takes their used_memory per room plus the MEMORY USAGE per room
 * of the keys outside the room's slot (its members' tokens, its share of the log), as measured on
 * the deployment's rooms.
 */
export const measureRoomBytes: Step<RoomBytes> = async (deployment) => {
  const before = await allKeyBytes(deployment);
  const rooms: TypicalRoom[] = [];
  const { processes } = deployment;
  await inParallel(ROOMS, processes.length * 2, async (i) => {
    rooms.push(await buildTypicalRoom(processes[i % processes.length]!.base, i));
  });
  const perRoom = (bytes: number) => bytes / rooms.length;
  const ownLive = perRoom(await sumOver(rooms, (room) => ownKeyBytes(deployment, room.slug)));
  const live = perRoom((await allKeyBytes(deployment)) - before);
  for (const room of rooms) await apiFor(room.base)('POST', `/api/rooms/${room.slug}/close`, room.creatorToken, {});
  const closed = perRoom((await allKeyBytes(deployment)) - before);
  const raced = await compactAll(deployment, rooms);
  const ownConcluded = perRoom(await sumOver(rooms, (room) => ownKeyBytes(deployment, room.slug)));
  const concluded = perRoom((await allKeyBytes(deployment)) - before);

  const prefix = 'capacity-copies:';
  const started = performance.now();
  const many = await measureRoomBytesAtScale(deployment.cluster.url, { cluster: true, rooms: MANY, keyPrefix: prefix });
  const manySeconds = (performance.now() - started) / 1000;
  await dropPrefix(deployment, prefix);

  // Keys a room adds outside its own slot (its members' tokens, its share of the log): the copies have none.
  const outside = concluded - ownConcluded;
  const figures = {
    liveBytesPerRoom: many.liveBytesPerRoom + outside,
    concludedBytesPerRoom: many.concludedBytesPerRoom + outside,
  };
  const shape = `${MEMBERS} members, ${DECISIONS} decided, ${MESSAGES} messages`;
  const copies = `${count(MANY)} copies of one typical room on the same Cluster (DUMP/RESTORE, then each compacted; ${manySeconds.toFixed(0)} s)`;
  return {
    figures,
    rows: [
      {
        case: ROWS.liveRoom,
        note: `${kib(figures.liveBytesPerRoom)} = the masters' used_memory grown per room over ${copies}, ${kib(many.liveBytesPerRoom)}, + the keys outside the room's slot (members' tokens, log share), ${kib(outside)}; MEMORY USAGE grown per room over ${rooms.length} rooms (${shape}) built on the deployment: ${kib(live)} (the room's own keys ${kib(ownLive)})`,
      },
      {
        case: ROWS.concludedRoom,
        ratio: figures.concludedBytesPerRoom / figures.liveBytesPerRoom,
        note: `${kib(figures.concludedBytesPerRoom)} compacted (ratio = / live) = used_memory per room over the ${count(MANY)} copies, ${kib(many.concludedBytesPerRoom)} (compaction ${(many.compactMs / MANY).toFixed(1)} ms a room), + ${kib(outside)} outside; on the deployment's ${rooms.length} rooms, MEMORY USAGE ${kib(closed)} once closed, ${kib(concluded)} once compacted (own keys ${kib(ownConcluded)}; ${raced} attempts met the closing process's lingering lock and were made again). The processes compact a concluded room after REDIS_COMPACT_AFTER_SECONDS (600 s) idle; this bench at once`,
      },
    ],
  };
};
