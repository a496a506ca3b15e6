/**
 * LogStore on Redis. Every key carries the `{~log}` hash tag, the same slot as the log lease (the
 * store's room lock of `LOG_LEASE_SLUG`), so each write is one Lua script that checks the lease
 * token (fencing) and the size it builds on before writing anything. Hash tiles are strings that
 * only grow by APPEND (a tile read is a GETRANGE); entries are a list; checkpoints a hash by size.
 *
 * The queue is filled by the room commit's follow-up (`RedisStore.commit`): a room commit lives in
 * its own slot and cannot write here atomically, so a crash between the two can leave a receipt
 * unqueued. `roomsBehind` finds such rooms by comparing each room's chain length with its logged
 * count; the integrator runs it when it takes the lease and then periodically.
 */
import type { Redis } from 'ioredis';
import { StoreConflictError, StoreUnavailableError } from './port.js';
import { exportRedisLog, importRedisLog, STAGING } from './redis-tlog-transfer.js';
import {
  LOG_LEASE_SLUG,
  type LogAppend,
  type LogImport,
  type LogPart,
  type LogState,
  type LogStore,
  type QueuedReceipt,
} from './tlog-port.js';

type Arg = string | number | Buffer;

/** Prefix of the error replies that mean "conflict". */
const LOG_CONFLICT = 'CONCLAVE_LOG_CONFLICT';

/**
 * KEYS: state, entries, index, rooms, queue, lease, then one tiles key per tile level appended.
 * ARGV: fence, expected size, n, n × (leaf data, receipt hash), consumed, r, r × (slug, logged), t × (from hash index, bytes).
 */
const APPEND_SCRIPT = `
local state, entries, index, rooms, queue, lease = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local conflict = function(why) return redis.error_reply('${LOG_CONFLICT} ' .. why) end
if redis.call('GET', lease) ~= ARGV[1] then return conflict('the log lease is no longer held') end
local size = tonumber(redis.call('HGET', state, 'size') or '0')
if size ~= tonumber(ARGV[2]) then return conflict('the log has ' .. size .. ' leaves, the append expected ' .. ARGV[2]) end
local n = tonumber(ARGV[3])
local consumedAt = 4 + n * 2
local r = tonumber(ARGV[consumedAt + 1])
local tilesAt = consumedAt + 2 + r * 2
local t = #KEYS - 6
for i = 0, t - 1 do
  local from = tonumber(ARGV[tilesAt + i * 2])
  if redis.call('STRLEN', KEYS[7 + i]) ~= from * 32 then return conflict('tile level ' .. i .. ' does not continue') end
end
for i = 0, n - 1 do
  redis.call('RPUSH', entries, ARGV[4 + i * 2])
  redis.call('HSET', index, ARGV[5 + i * 2], size + i)
end
for i = 0, r - 1 do
  redis.call('HSET', rooms, ARGV[consumedAt + 2 + i * 2], ARGV[consumedAt + 3 + i * 2])
end
for i = 0, t - 1 do
  redis.call('APPEND', KEYS[7 + i], ARGV[tilesAt + 1 + i * 2])
end
local consumed = tonumber(ARGV[consumedAt])
if consumed > 0 then redis.call('LTRIM', queue, consumed, -1) end
redis.call('HSET', state, 'size', size + n)
return size + n
`;

/** KEYS: state, checkpoints, lease, sizes (sorted set). ARGV: fence, size, note. */
const PUBLISH_SCRIPT = `
local state, checkpoints, lease = KEYS[1], KEYS[2], KEYS[3]
local conflict = function(why) return redis.error_reply('${LOG_CONFLICT} ' .. why) end
if redis.call('GET', lease) ~= ARGV[1] then return conflict('the log lease is no longer held') end
local size = tonumber(redis.call('HGET', state, 'size') or '0')
if size ~= tonumber(ARGV[2]) then return conflict('the log has ' .. size .. ' leaves, not ' .. ARGV[2]) end
local existing = redis.call('HGET', checkpoints, ARGV[2])
if existing and existing ~= ARGV[3] then return conflict('a different checkpoint of size ' .. ARGV[2] .. ' is published') end
redis.call('HSET', checkpoints, ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[4], size, ARGV[2])
if size > tonumber(redis.call('HGET', state, 'published') or '0') then redis.call('HSET', state, 'published', size) end
return size
`;

/** KEYS: state, checkpoints. Returns { size, published, latest note }. */
const STATE_SCRIPT = `
local fields = redis.call('HMGET', KEYS[1], 'size', 'published')
local published = fields[2] or '0'
return { fields[1] or '0', published, redis.call('HGET', KEYS[2], published) or '' }
`;

interface LogCommands {
  conclaveLogAppend(...args: Arg[]): Promise<number>;
  conclaveLogPublish(...args: Arg[]): Promise<number>;
  conclaveLogState(...args: Arg[]): Promise<[string, string, string]>;
}

export function defineLogCommands(redis: Redis): void {
  redis.defineCommand('conclaveLogAppend', { lua: APPEND_SCRIPT });
  redis.defineCommand('conclaveLogPublish', { numberOfKeys: 4, lua: PUBLISH_SCRIPT });
  redis.defineCommand('conclaveLogState', { numberOfKeys: 2, lua: STATE_SCRIPT });
}

/**
 * The keys of one log. The frozen v1 log keeps the keys it always had (`tlog:{~log}:*`); the live
 * commitment log has the same layout under `tlog:{~log}:v2:*`, in the same hash slot, and both
 * share the one queue, which only the live log consumes. Under `area` (an import's staging, e.g.
 * `:import`), the same layout beside the log's keys, queue included: `tlog:{~log}:v2:import:*` for
 * the live log, `tlog:{~log}:import:*` for the frozen one, so two imports never share a key.
 */
export function logKeys(prefix: string, log: 'live' | 'frozen' = 'live', area = '') {
  const shared = `${prefix}tlog:{${LOG_LEASE_SLUG}}`;
  const base = `${log === 'live' ? `${shared}:v2` : shared}${area}`;
  return {
    state: `${base}:state`,
    queue: area === '' ? `${shared}:queue` : `${base}:queue`,
    /** Under an import's `area`: the set of keys it staged, so that one that died half-way is cleared by the next. */
    stagedList: `${base}:keys`,
    entries: `${base}:entries`,
    index: `${base}:index`,
    rooms: `${base}:rooms`,
    checkpoints: `${base}:checkpoints`,
    /** Published sizes, scored by size: the listing pages through it without reading every checkpoint. */
    sizes: `${base}:sizes`,
    tiles: (level: number) => `${base}:tiles:${level}`,
    cosignatures: (size: number) => `${base}:cosignatures:${size}`,
  };
}

/** The owning store's wrappers: deadlines and error mapping, replication waits, and its key layout. */
export interface LogRedisCalls {
  call<T>(operation: () => Promise<T>): Promise<T>;
  /** REDIS_WAIT_REPLICAS and its timeout: log writes wait for them as room commits do. */
  replication: { replicas: number; timeoutMs: number };
  leaseKey: string;
  roomKey(slug: string): string;
  slugsKey: string;
}

export class RedisLogStore implements LogStore {
  private readonly key: ReturnType<typeof logKeys>;

  constructor(
    private readonly redis: Redis & LogCommands,
    private readonly keyPrefix: string,
    private readonly calls: LogRedisCalls,
    private readonly log: 'live' | 'frozen' = 'live',
  ) {
    this.key = logKeys(keyPrefix, log);
  }

  /** The room commit's follow-up: queues its receipts for the integrator. */
  enqueue(receipts: QueuedReceipt[]): Promise<number> {
    return this.redis.rpush(this.key.queue, ...receipts.map((r) => JSON.stringify(r)));
  }

  state(): Promise<LogState> {
    return this.call(async () => {
      const [size, published, note] = await this.redis.conclaveLogState(this.key.state, this.key.checkpoints);
      return { size: Number(size), published: Number(published), checkpoint: note === '' ? null : note };
    });
  }

  queued(limit: number): Promise<QueuedReceipt[]> {
    return this.call(async () =>
      (await this.redis.lrange(this.key.queue, 0, limit - 1)).map((item) => JSON.parse(item) as QueuedReceipt),
    );
  }

  loggedCounts(): Promise<Map<string, number>> {
    return this.call(async () => {
      const all = await this.redis.hgetall(this.key.rooms);
      return new Map(Object.entries(all).map(([slug, logged]) => [slug, Number(logged)]));
    });
  }

  roomsBehind(counts: Map<string, number>): Promise<string[]> {
    return this.call(async () => {
      const behind: string[] = [];
      let cursor = '0';
      do {
        const [next, slugs] = await this.redis.sscan(this.calls.slugsKey, cursor, 'COUNT', 500);
        cursor = next;
        const lengths = await Promise.all(slugs.map((slug) => this.redis.hget(this.calls.roomKey(slug), 'chain_len')));
        slugs.forEach((slug, i) => {
          if (Number(lengths[i] ?? 0) > (counts.get(slug) ?? 0)) behind.push(slug);
        });
      } while (cursor !== '0');
      return behind;
    });
  }

  async append(batch: LogAppend): Promise<void> {
    const rooms = Object.entries(batch.rooms);
    const args: Arg[] = [
      6 + batch.tiles.length,
      this.key.state,
      this.key.entries,
      this.key.index,
      this.key.rooms,
      this.key.queue,
      this.calls.leaseKey,
      ...batch.tiles.map((tile) => this.key.tiles(tile.level)),
      batch.fence,
      batch.expected_size,
      batch.leaves.length,
      ...batch.leaves.flatMap((leaf) => [leaf.data, leaf.receipt_hash]),
      batch.consumed,
      rooms.length,
      ...rooms.flat(),
      ...batch.tiles.flatMap((tile) => [tile.from, Buffer.from(tile.hashes)]),
    ];
    // Published only once the replicas hold the leaves: a failover then cannot lose a published tree.
    await this.replicated('conclaveLogAppend', args);
  }

  async publish(size: number, note: string, fence: string): Promise<void> {
    await this.replicated('conclaveLogPublish', [
      this.key.state,
      this.key.checkpoints,
      this.calls.leaseKey,
      this.key.sizes,
      fence,
      size,
      note,
    ]);
  }

  /** A log script, followed in the same pipeline (same node) by WAIT when replicas are required. */
  private replicated(script: 'conclaveLogAppend' | 'conclaveLogPublish', args: Arg[]): Promise<unknown> {
    const { replicas, timeoutMs } = this.calls.replication;
    if (replicas === 0) return this.call(() => this.redis[script](...args));
    return this.call(async () => {
      const pipeline = this.redis.pipeline() as unknown as LogCommands & {
        wait(replicas: number, timeout: number): unknown;
        exec(): Promise<[Error | null, unknown][] | null>;
      };
      pipeline[script](...args);
      pipeline.wait(replicas, timeoutMs);
      const replies = (await pipeline.exec()) ?? [];
      const [scriptError] = replies[0] ?? [new Error('no reply to the log script')];
      if (scriptError) throw scriptError;
      const [waitError, acknowledged] = replies[1] ?? [new Error('no reply to WAIT')];
      if (waitError) throw waitError;
      if (Number(acknowledged) < replicas) {
        throw new StoreUnavailableError(`the log write reached ${Number(acknowledged)} of ${replicas} Redis replicas`);
      }
    });
  }

  checkpointSizes(after: number, limit: number): Promise<number[]> {
    return this.call(async () =>
      (await this.redis.zrangebyscore(this.key.sizes, `(${after}`, '+inf', 'LIMIT', 0, limit)).map(Number),
    );
  }

  checkpointAt(size: number): Promise<string | null> {
    return this.call(() => this.redis.hget(this.key.checkpoints, String(size)));
  }

  addCosignature(size: number, witness: string, line: string): Promise<void> {
    return this.call(async () => {
      await this.redis.hset(this.key.cosignatures(size), witness, line);
    });
  }

  cosignatures(size: number): Promise<string[]> {
    return this.call(async () => {
      const all = await this.redis.hgetall(this.key.cosignatures(size));
      return Object.keys(all)
        .sort()
        .map((witness) => all[witness] as string);
    });
  }

  tileHashes(level: number, from: number, count: number): Promise<Uint8Array> {
    if (count <= 0) return Promise.resolve(new Uint8Array(0));
    return this.call(
      async () =>
        new Uint8Array(await this.redis.getrangeBuffer(this.key.tiles(level), from * 32, (from + count) * 32 - 1)),
    );
  }

  entries(from: number, count: number): Promise<string[]> {
    if (count <= 0) return Promise.resolve([]);
    return this.call(() => this.redis.lrange(this.key.entries, from, from + count - 1));
  }

  indexOf(receiptHash: string): Promise<number | null> {
    return this.call(async () => {
      const index = await this.redis.hget(this.key.index, receiptHash);
      return index === null ? null : Number(index);
    });
  }

  // Moving the log to another store (LogPart in tlog-port.ts): redis-tlog-transfer.ts.

  exportLog(chunk: number): AsyncIterable<LogPart> {
    return exportRedisLog(this.transfer(), chunk);
  }

  importLog(fence: string): Promise<LogImport> {
    return importRedisLog(this.transfer(), fence);
  }

  private transfer() {
    return {
      redis: this.redis,
      keys: this.key,
      staged: logKeys(this.keyPrefix, this.log, STAGING),
      // The shared queue travels once, with the live log (the only one that consumes it).
      queue: this.log === 'live',
      conflict: LOG_CONFLICT,
      leaseKey: this.calls.leaseKey,
      call: <T>(operation: () => Promise<T>) => this.call(operation),
    };
  }

  private async call<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await this.calls.call(operation);
    } catch (error) {
      if (error instanceof Error && error.message.includes(LOG_CONFLICT)) {
        throw new StoreConflictError(
          error.message.slice(error.message.indexOf(LOG_CONFLICT) + LOG_CONFLICT.length).trim(),
        );
      }
      throw error;
    }
  }
}
