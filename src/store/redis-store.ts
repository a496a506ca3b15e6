/**
 * RoomStore on Redis (ioredis), for several service processes sharing one Redis.
 *
 * Every key of a room carries the `{slug}` hash tag, so a room's commit is one Lua script over one
 * hash slot and also works on Redis Cluster. The few global keys (the slug registry, the deadline
 * index, idempotency records of room-less scopes) are only ever touched by single-key commands.
 *
 * The store is the port's face; the work is in modules of one job each: redis-keys.ts (the key
 * layout), redis-calls.ts (scripts, deadlines, errors), redis-codec.ts, redis-lock-taker.ts (the
 * room lock), redis-room-lease.ts (the locks this process holds or lets linger, and what holding
 * them tells), redis-room-reads.ts (loads and existence checks), redis-room-commit.ts (the commit
 * and its follow-ups), redis-deadline-index.ts and redis-maintenance.ts.
 */
import { randomUUID } from 'node:crypto';
import type {
  ArchivedDecision,
  CommitBatch,
  CommittedRoom,
  IdempotencyRecord,
  RoomLock,
  RoomRecord,
  RoomStore,
  RoomVersion,
  StoredEvent,
  StoredReceipt,
} from './port.js';
import { isIdempotencyExpired } from './common.js';
import { DeadlineCalls, defineRoomCommands, type ScriptedRedis, toStoreError } from './redis-calls.js';
import { decodeArchived } from './redis-codec.js';
import { connectRedisClient, createRedisClient, type RedisClient } from './redis-connection.js';
import { RedisDeadlineIndex } from './redis-deadline-index.js';
import { RedisEngagementStore } from './redis-engagement.js';
import { defineEngagementCommands, engagementKeys } from './redis-engagement-commands.js';
import { keysOf, type RedisKeys } from './redis-keys.js';
import { type CompactOutcome, RedisCompaction } from './redis-compaction.js';
import { RedisLockTaker } from './redis-lock-taker.js';
import { RedisMaintenance } from './redis-maintenance.js';
import { RedisRoomCommits } from './redis-room-commit.js';
import { RoomLeases } from './redis-room-lease.js';
import { ExistenceMemo, RedisRoomReads } from './redis-room-reads.js';
import { defineLogCommands, RedisLogStore } from './redis-tlog.js';
import { LOG_LEASE_SLUG } from './tlog-port.js';

export interface RedisStoreOptions {
  /** redis:// or rediss:// URL, or several nodes of a Redis Cluster, comma-separated. */
  url: string;
  /** A Redis Cluster even when `url` names one node. */
  cluster?: boolean;
  /**
   * Acknowledge a room commit only once this many replicas have it (WAIT); fewer within
   * `waitTimeoutMs` fails the write as unavailable (503), never a false success.
   */
  waitReplicas?: number;
  waitTimeoutMs?: number;
  /** Prepended to every key. Defaults to 'conclave:'. */
  keyPrefix?: string;
  /** Epoch ms; governs idempotency record age. Defaults to Date.now. */
  clock?: () => number;
  /** A command unanswered this long fails as unavailable. Defaults to 2 s. */
  commandTimeoutMs?: number;
  /**
   * REDIS_COMPACT_AFTER_SECONDS in ms: a concluded room idle this long is compacted
   * (redis-compaction.ts); null = never. Defaults to null (the service passes its setting).
   */
  compactAfterMs?: number | null;
  /**
   * COMMIT_NOTICES: `sharded` announces each commit on its room's channel only; `both` also on the
   * broadcast channel that processes of earlier versions listen to (engagement/redis-fanout.ts).
   */
  commitNotices?: 'sharded' | 'both';
}

/** A request that gets no answer within this time fails as unavailable instead of hanging. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
/** How long a commit waits for its replicas (REDIS_WAIT_REPLICAS) before it fails as unavailable. */
export const DEFAULT_WAIT_TIMEOUT_MS = 1000;

export async function openRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  const redis = createRedisClient(options.url, {
    cluster: options.cluster ?? false,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    role: 'commands',
  });
  defineRoomCommands(redis);
  defineEngagementCommands(redis);
  defineLogCommands(redis);
  // Room lock wakes (redis-room-lock.ts) arrive on a connection of their own: a subscribed
  // connection can issue nothing else. A lost wake only costs a waiter one poll interval.
  const wakeListener = createRedisClient(options.url, {
    cluster: options.cluster ?? false,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    role: 'pubsub',
  });
  const keyPrefix = options.keyPrefix ?? 'conclave:';
  try {
    await Promise.all([connectRedisClient(redis), connectRedisClient(wakeListener)]);
    await wakeListener.subscribe(keysOf(keyPrefix).lockWakes);
  } catch (error) {
    redis.disconnect();
    wakeListener.disconnect();
    throw toStoreError(error);
  }
  const version = await serverVersion(redis).catch(() => null);
  if (version !== null && version < 7) {
    redis.disconnect();
    wakeListener.disconnect();
    throw new Error(
      `Redis ${version} is too old: Conclave needs Redis 7 or later (the commit script announces commits with SPUBLISH, sharded pub/sub); upgrade Redis (docs/operators.md, Storage)`,
    );
  }
  return new RedisStore(
    redis as ScriptedRedis,
    keyPrefix,
    options.clock ?? Date.now,
    { replicas: options.waitReplicas ?? 0, timeoutMs: options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS },
    options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    wakeListener,
    options.compactAfterMs ?? null,
    options.commitNotices === 'both',
  );
}

/** The major version the server reports (on a Cluster, the node that answered), or null. */
async function serverVersion(redis: RedisClient): Promise<number | null> {
  const info = await redis.info('server');
  const match = /redis_version:(\d+)/.exec(info);
  return match ? Number(match[1]) : null;
}

export class RedisStore implements RoomStore {
  readonly kind = 'redis' as const;
  readonly commitOrigin = randomUUID();
  readonly engagement: RedisEngagementStore;
  readonly tlog: RedisLogStore;
  readonly frozenTlog: RedisLogStore;
  private readonly key: RedisKeys;
  private readonly calls: DeadlineCalls;
  private readonly locks: RedisLockTaker;
  private readonly leases = new RoomLeases((slug, token) => this.locks.releaseLock(slug, token));
  private readonly memo = new ExistenceMemo();
  private readonly reads: RedisRoomReads;
  private readonly commits: RedisRoomCommits;
  private readonly deadlines: RedisDeadlineIndex;
  private readonly maintenance: RedisMaintenance;
  private readonly compaction: RedisCompaction;

  /** Use openRedisStore(), which defines the scripts and connects first. */
  constructor(
    private readonly redis: ScriptedRedis,
    keyPrefix: string,
    private readonly clock: () => number,
    replication: { replicas: number; timeoutMs: number } = { replicas: 0, timeoutMs: 0 },
    deadlineMs = DEFAULT_COMMAND_TIMEOUT_MS,
    private readonly wakeListener: RedisClient | null = null,
    compactAfterMs: number | null = null,
    /** COMMIT_NOTICES=both: also announce commits on the broadcast channel of earlier versions. */
    broadcastCommits = false,
  ) {
    this.key = keysOf(keyPrefix);
    this.calls = new DeadlineCalls(deadlineMs);
    const { leases, memo } = this;
    this.compaction = new RedisCompaction(redis, this.key, this.calls, clock, compactAfterMs);
    this.reads = new RedisRoomReads(redis, this.key, this.calls, leases, memo, this.compaction);
    this.locks = new RedisLockTaker(redis, this.key, this.calls, leases, memo, (slug) =>
      this.reads.loadCompacted(slug),
    );
    wakeListener?.on('message', (channel: string, slug: string) => {
      if (channel !== this.key.lockWakes) return;
      this.locks.heard(slug);
      this.leases.wanted(slug);
    });
    this.engagement = new RedisEngagementStore(redis, keyPrefix, this.key.room, this.calls);
    const logCalls = {
      call: <T>(operation: () => Promise<T>) => this.calls.call(operation),
      replication,
      leaseKey: this.key.lock(LOG_LEASE_SLUG),
      roomKey: this.key.room,
      slugsKey: this.key.slugs,
    };
    const logRedis = redis as unknown as ConstructorParameters<typeof RedisLogStore>[0];
    this.tlog = new RedisLogStore(logRedis, keyPrefix, logCalls);
    this.frozenTlog = new RedisLogStore(logRedis, keyPrefix, logCalls, 'frozen');
    this.commits = new RedisRoomCommits(
      redis,
      this.key,
      this.calls,
      clock,
      replication,
      this.tlog,
      leases,
      memo,
      { origin: this.commitOrigin, broadcast: broadcastCommits },
      this.compaction,
    );
    this.deadlines = new RedisDeadlineIndex(redis, this.key, this.calls);
    this.maintenance = new RedisMaintenance(redis, this.key, keyPrefix, this.calls, clock);
    if (wakeListener !== null) this.compaction.start();
  }

  linkRoom(key: string, slug: string, at: number): Promise<void> {
    return this.calls.call(async () => {
      await this.redis.zadd(this.key.links(key), at, slug);
    });
  }

  linkedRooms(key: string, limit: number): Promise<string[]> {
    return this.calls.call(() => this.redis.zrevrange(this.key.links(key), 0, limit - 1));
  }

  reserveSlug(slug: string): Promise<boolean> {
    return this.calls.call(async () => (await this.redis.sadd(this.key.slugs, slug)) === 1);
  }

  load(slug: string): Promise<RoomRecord | null> {
    return this.reads.load(slug);
  }

  loadIfChanged(slug: string, known: RoomVersion): Promise<RoomRecord | 'unchanged' | null> {
    return this.reads.loadIfChanged(slug, known);
  }

  roomExists(slug: string): Promise<boolean> {
    return this.reads.roomExists(slug);
  }

  commit(batch: CommitBatch): Promise<CommittedRoom> {
    return this.commits.commit(batch);
  }

  // The history reads answer from either layout, in one script call (redis-compaction.ts): the same
  // texts, parsed the same way, whether the room is expanded or compacted.

  async events(slug: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const read = await this.compaction.read(slug, 'events', afterSeq, limit);
    const events = (read.compacted ? read.room.events : texts(read.reply)).map(
      (text) => JSON.parse(text) as StoredEvent,
    );
    return read.compacted ? events.filter((e) => e.seq > afterSeq).slice(0, limit) : events;
  }

  async eventById(slug: string, id: string): Promise<StoredEvent | null> {
    const read = await this.compaction.read(slug, 'event', id);
    const events = (read.compacted ? read.room.events : texts(read.reply)).map(
      (text) => JSON.parse(text) as StoredEvent,
    );
    return events.find((e) => e.id === id) ?? null;
  }

  async receipts(slug: string): Promise<StoredReceipt[]> {
    const read = await this.compaction.read(slug, 'receipts');
    return (read.compacted ? read.room.receipts : texts(read.reply)).map((text) => JSON.parse(text) as StoredReceipt);
  }

  async archivedDecisions(slug: string, afterSeq = 0): Promise<ArchivedDecision[]> {
    const read = await this.compaction.read(slug, 'archived', afterSeq);
    if (!read.compacted) return (read.reply as Buffer[]).map(decodeArchived);
    return read.room.archived.filter((a) => a.seq > afterSeq).map((a) => JSON.parse(a.json) as ArchivedDecision);
  }

  /**
   * Compacts a concluded room idle for `idleMs` (default REDIS_COMPACT_AFTER_SECONDS) now; the
   * sweep and the commit that concludes a room call this on their own (redis-compaction.ts).
   */
  compactRoom(slug: string, idleMs?: number): Promise<CompactOutcome> {
    return this.compaction.compact(slug, idleMs);
  }

  /** Tells `report` of every background compaction that failed (the room stays expanded for the next sweep). */
  reportCompactionErrors(report: (error: unknown) => void): void {
    this.compaction.onError = report;
  }

  /**
   * One compaction sweep over every room now. `shared`: only if no process of the deployment has
   * swept this period (what the hourly timer does), else 0 without a look.
   */
  compactConcludedRooms(shared = false): Promise<number> {
    return shared ? this.compaction.sweepIfDue() : this.compaction.sweep();
  }

  roomSlugs(cursor: string, limit: number): Promise<{ slugs: string[]; cursor: string | null }> {
    return this.calls.call(async () => {
      const [next, slugs] = await this.redis.sscan(this.key.slugs, cursor === '' ? '0' : cursor, 'COUNT', limit);
      return { slugs, cursor: next === '0' ? null : next };
    });
  }

  meta(key: string): Promise<string | null> {
    return this.calls.call(() => this.redis.hget(this.key.meta, key));
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.calls.call(async () => {
      await this.redis.hset(this.key.meta, key, value);
    });
  }

  idempotency(scope: string): Promise<IdempotencyRecord | null> {
    return this.calls.call(async () => {
      const text = await this.redis.get(this.key.idempotency(scope));
      if (text === null) return null;
      const record = JSON.parse(text) as IdempotencyRecord;
      // Redis expires the key on its own time; the injected clock is checked too.
      return isIdempotencyExpired(record, this.clock()) ? null : record;
    });
  }

  async deleteRoom(slug: string): Promise<boolean> {
    const engagement = engagementKeys(this.key.room(slug));
    const removed = await this.calls.call(() =>
      this.redis.conclaveDeleteRoom(
        this.key.room(slug),
        this.key.events(slug),
        this.key.eventIds(slug),
        this.key.receipts(slug),
        this.key.archived(slug),
        engagement.webhooks,
        engagement.deliveries,
        engagement.openerWakes,
        this.key.compact(slug),
      ),
    );
    this.memo.forget(slug);
    await this.calls.bestEffort(async () => {
      await Promise.all([
        this.redis.zrem(this.key.deadlines(slug), slug),
        this.redis.zrem(this.key.legacyDeadlines, slug),
      ]);
    });
    return removed === 1;
  }

  /** Takes the room's lock in its turn (redis-lock-taker.ts). */
  lock(slug: string, ttlMs: number, waitMs: number, known?: RoomVersion | null): Promise<RoomLock> {
    return this.locks.lock(slug, ttlMs, waitMs, known);
  }

  dueRooms(nowMs: number, limit: number): Promise<string[]> {
    return this.deadlines.dueRooms(nowMs, limit);
  }

  nextDeadline(): Promise<number | null> {
    return this.deadlines.nextDeadline();
  }

  ping(): Promise<void> {
    return this.calls.call(async () => {
      await this.redis.ping();
    });
  }

  async reclaimHistory(slug: string): Promise<number> {
    // Retention deletes from the expanded layout; the sweep compacts what is left again.
    await this.compaction.expand(slug);
    return this.maintenance.reclaimHistory(slug);
  }

  purgeUnsealedIdempotency(): Promise<number> {
    return this.maintenance.purgeUnsealedIdempotency();
  }

  async close(): Promise<void> {
    this.compaction.stop();
    await this.leases.releaseAll();
    await this.commits.settle();
    await Promise.all(
      [this.redis, this.wakeListener].map(async (client) => {
        if (!client) return;
        try {
          await client.quit();
        } catch {
          client.disconnect();
        }
      }),
    );
  }
}

/** A reply's items as text. */
function texts(reply: unknown): string[] {
  return (reply as Buffer[]).map((item) => item.toString('utf8'));
}
