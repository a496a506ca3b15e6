/**
 * Export and import of one Redis log (LogPart in tlog-port.ts; the keys of `logKeys` in
 * redis-tlog.ts: the live commitment log's or the frozen v1 log's), for moving a log between stores
 * (log-transfer.ts). Reads go a bounded page at a time (LRANGE, GETRANGE, ZRANGEBYSCORE, HSCAN), so
 * a log of millions of leaves never sits in memory. The shared queue travels with the live log only.
 *
 * An import writes beside its log, under `logKeys(prefix, log, ':import')` (the same hash slot; the
 * two logs stage apart), and one script then renames those keys into place: the store holds the
 * whole imported log or none of it, and an integrator never sees half of one. The staged keys are
 * listed in a set, so an import that died half-way is cleared by the next one.
 */
import type { Redis } from 'ioredis';
import { StoreConflictError } from './port.js';
import type { logKeys } from './redis-tlog.js';
import type { LogImport, LogPart, QueuedReceipt } from './tlog-port.js';

const HASH = 32;
/** Where an import stages its keys (RedisLogStore passes logKeys(prefix, log, STAGING) as `staged`). */
export const STAGING = ':import';

type LogKeys = ReturnType<typeof logKeys>;

export interface LogTransferRedis {
  redis: Redis;
  /** The log's keys, and the same layout under the staging area where an import stages its own. */
  keys: LogKeys;
  staged: LogKeys;
  /** Whether the shared queue travels with this log: the live log's, which consumes it (never the frozen one's). */
  queue: boolean;
  /** The error-reply prefix the owning store maps to StoreConflictError. */
  conflict: string;
  /** The log lease (the store's room lock of `~log`): the import's fence. */
  leaseKey: string;
  /** The owning store's wrapper: deadlines, error mapping. */
  call<T>(operation: () => Promise<T>): Promise<T>;
}

export async function* exportRedisLog(
  { redis, keys: key, queue, call }: LogTransferRedis,
  chunk: number,
): AsyncIterable<LogPart> {
  for (let from = 0; ; ) {
    const jwss = await call(() => redis.lrange(key.entries, from, from + chunk - 1));
    if (jwss.length === 0) break;
    yield { kind: 'entries', from, entries: jwss };
    from += jwss.length;
  }
  for await (const flat of hashPages(redis, key.index, chunk, call)) {
    const leaves: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) leaves.push([flat[i] as string, Number(flat[i + 1])]);
    if (leaves.length > 0) yield { kind: 'index', leaves };
  }
  for (let level = 0; ; level++) {
    const bytes = await call(() => redis.strlen(key.tiles(level)));
    if (bytes === 0) break;
    for (let from = 0; from * HASH < bytes; from += chunk) {
      const end = Math.min(bytes, (from + chunk) * HASH);
      const hashes = await call(() => redis.getrangeBuffer(key.tiles(level), from * HASH, end - 1));
      yield { kind: 'tiles', level, from, hashes: new Uint8Array(hashes) };
    }
  }
  for (let after = -1; ; ) {
    const sizes = (await call(() => redis.zrangebyscore(key.sizes, `(${after}`, '+inf', 'LIMIT', 0, chunk))).map(
      Number,
    );
    if (sizes.length === 0) break;
    const notes = await call(() => redis.hmget(key.checkpoints, ...sizes.map(String)));
    const lines = await call(() => Promise.all(sizes.map((size) => redis.hgetall(key.cosignatures(size)))));
    yield {
      kind: 'checkpoints',
      checkpoints: sizes.map((size, i) => {
        const note = notes[i];
        if (typeof note !== 'string') throw new Error(`the log lists checkpoint ${size} but does not hold it`);
        const byWitness = lines[i] ?? {};
        const cosignatures = Object.keys(byWitness)
          .sort()
          .map((witness) => ({ witness, line: byWitness[witness] as string }));
        return { size, note, cosignatures };
      }),
    };
    after = sizes[sizes.length - 1] as number;
  }
  for await (const flat of hashPages(redis, key.rooms, chunk, call)) {
    const rooms: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) rooms.push([flat[i] as string, Number(flat[i + 1])]);
    if (rooms.length > 0) yield { kind: 'rooms', rooms };
  }
  for (let from = 0; queue; ) {
    const items = await call(() => redis.lrange(key.queue, from, from + chunk - 1));
    if (items.length === 0) break;
    yield { kind: 'queue', receipts: items.map((item) => JSON.parse(item) as QueuedReceipt) };
    from += items.length;
  }
  const [size, published] = await call(() => redis.hmget(key.state, 'size', 'published'));
  yield { kind: 'state', size: Number(size ?? 0), published: Number(published ?? 0) };
}

/**
 * A hash's fields and values, one HSCAN page (a flat field/value list) at a time. HSCAN may repeat a
 * field; every import of a hash page is an HSET or an upsert, so a repeat is harmless.
 */
async function* hashPages(
  redis: Redis,
  key: string,
  chunk: number,
  call: LogTransferRedis['call'],
): AsyncIterable<string[]> {
  let cursor = '0';
  do {
    const [next, flat] = await call(() => redis.hscan(key, cursor, 'COUNT', chunk));
    cursor = next;
    yield flat;
  } while (cursor !== '0');
}

/**
 * KEYS: lease, staged-key list, then pairs (staged, in place): the state first, then the others.
 * ARGV: fence, whether the last pair is the queue. Every key in place but the state and the queue
 * must be absent: the imported log never lands on a log. (A state alone, of size 0, is no log: an
 * empty log copied before leaves only it.) The queue in place is replaced (the rooms copied beside
 * the log queued receipts that are already logged or in the imported queue).
 */
const finishScript = (conflictPrefix: string) => `
local conflict = function(why) return redis.error_reply('${conflictPrefix} ' .. why) end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return conflict('the log lease is no longer held') end
local last = #KEYS - 1
local checked = last
if ARGV[2] == '1' then checked = last - 2 end
if tonumber(redis.call('HGET', KEYS[4], 'size') or '0') > 0 then
  return conflict('this store already holds a transparency log (' .. KEYS[4] .. ')')
end
for i = 5, checked, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    return conflict('this store already holds a transparency log (' .. KEYS[i + 1] .. ')')
  end
end
for i = 3, checked, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('RENAME', KEYS[i], KEYS[i + 1]) end
end
if ARGV[2] == '1' then
  redis.call('DEL', KEYS[last + 1])
  if redis.call('EXISTS', KEYS[last]) == 1 then redis.call('RENAME', KEYS[last], KEYS[last + 1]) end
end
redis.call('DEL', KEYS[2])
return 1
`;

export async function importRedisLog(transfer: LogTransferRedis, fence: string): Promise<LogImport> {
  const { redis, leaseKey, call, keys, staged } = transfer;
  const stagedList = staged.stagedList;
  await clearStaged(transfer, stagedList);
  const next = { entries: 0, tiles: new Map<number, number>() };
  const cosigned: number[] = [];
  let levels = 0;
  let state: { size: number; published: number } | null = null;

  /** One round trip: the writes, with their keys recorded in the staged-key list first. */
  const stage = (keys: string[], writes: (pipeline: ReturnType<Redis['pipeline']>) => void) =>
    call(async () => {
      const pipeline = redis.pipeline();
      pipeline.sadd(stagedList, ...keys);
      writes(pipeline);
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    });

  const write = async (part: LogPart): Promise<void> => {
    switch (part.kind) {
      case 'entries': {
        if (part.entries.length === 0) return;
        if (part.from !== next.entries) throw new Error(`entries from ${part.from} do not follow leaf ${next.entries}`);
        const { entries } = part;
        await stage([staged.entries], (p) => p.rpush(staged.entries, ...entries));
        next.entries += entries.length;
        return;
      }
      case 'index': {
        if (part.leaves.length === 0) return;
        const { leaves } = part;
        await stage([staged.index], (p) =>
          p.hset(staged.index, ...leaves.flatMap(([hash, leaf]) => [hash, String(leaf)])),
        );
        return;
      }
      case 'tiles': {
        const expected = next.tiles.get(part.level) ?? 0;
        if (part.from !== expected)
          throw new Error(`tile level ${part.level} from ${part.from} does not follow ${expected}`);
        const { level, hashes } = part;
        await stage([staged.tiles(level)], (p) => p.append(staged.tiles(level), Buffer.from(hashes)));
        next.tiles.set(level, expected + hashes.length / HASH);
        levels = Math.max(levels, level + 1);
        return;
      }
      case 'checkpoints': {
        if (part.checkpoints.length === 0) return;
        const withLines = part.checkpoints.filter((c) => c.cosignatures.length > 0);
        await stage([staged.checkpoints, staged.sizes, ...withLines.map((c) => staged.cosignatures(c.size))], (p) => {
          p.hset(staged.checkpoints, ...part.checkpoints.flatMap((c) => [String(c.size), c.note]));
          p.zadd(staged.sizes, ...part.checkpoints.flatMap((c) => [c.size, String(c.size)]));
          for (const c of withLines)
            p.hset(staged.cosignatures(c.size), ...c.cosignatures.flatMap(({ witness, line }) => [witness, line]));
        });
        cosigned.push(...withLines.map((c) => c.size));
        return;
      }
      case 'rooms':
        if (part.rooms.length === 0) return;
        await stage([staged.rooms], (p) => p.hset(staged.rooms, ...part.rooms.flat().map(String)));
        return;
      case 'queue':
        if (!transfer.queue)
          throw new Error('the frozen log carries no queue: the shared queue travels with the live log');
        if (part.receipts.length === 0) return;
        // Item for item as the room commit's follow-up queues them (RedisLogStore.enqueue).
        await stage([staged.queue], (p) =>
          p.rpush(
            staged.queue,
            ...part.receipts.map(({ slug, sequence, jws, receipt_hash }) =>
              JSON.stringify({ slug, sequence, jws, receipt_hash }),
            ),
          ),
        );
        return;
      case 'state':
        state = { size: part.size, published: part.published };
        await stage([staged.state], (p) =>
          p.hset(staged.state, 'size', String(part.size), 'published', String(part.published)),
        );
        return;
    }
  };

  return {
    write,
    async finish() {
      if (state === null) throw new Error('the exported log ended without its state');
      if (next.entries !== state.size || (next.tiles.get(0) ?? 0) !== state.size)
        throw new StoreConflictError(
          `the import wrote ${next.entries} entries and ${next.tiles.get(0) ?? 0} leaf hashes, the exported log has ${state.size} leaves`,
        );
      const pairs = [
        [staged.state, keys.state],
        [staged.entries, keys.entries],
        [staged.index, keys.index],
        [staged.rooms, keys.rooms],
        [staged.checkpoints, keys.checkpoints],
        [staged.sizes, keys.sizes],
        ...Array.from({ length: Math.max(levels, 1) }, (_, level) => [staged.tiles(level), keys.tiles(level)]),
        ...cosigned.map((size) => [staged.cosignatures(size), keys.cosignatures(size)]),
        ...(transfer.queue ? [[staged.queue, keys.queue]] : []),
      ];
      const script = [leaseKey, stagedList, ...pairs.flat()];
      await call(() =>
        redis.eval(finishScript(transfer.conflict), script.length, ...script, fence, transfer.queue ? '1' : '0'),
      );
    },
    abandon: () => clearStaged(transfer, stagedList),
  };
}

/** Deletes every staged key an import recorded, and the record. */
async function clearStaged({ redis, call }: LogTransferRedis, stagedList: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await call(() => redis.sscan(stagedList, cursor, 'COUNT', 500));
    cursor = next;
    if (keys.length > 0) await call(() => redis.unlink(...keys));
  } while (cursor !== '0');
  await call(() => redis.del(stagedList));
}
