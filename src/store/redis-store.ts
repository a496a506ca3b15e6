/**
 * RoomStore on Redis (ioredis), for several service processes sharing one Redis.
 *
 * Every key of a room carries the `{slug}` hash tag, so a room's commit is one Lua script over one
 * hash slot and also works on Redis Cluster. The few global keys (the slug registry, the deadline
 * index, idempotency records of room-less scopes) are only ever touched by single-key commands.
 */
import { randomUUID } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  assertBatchShape,
  IDEMPOTENCY_TTL_MS,
  SEALED_BODY_PREFIX,
  isIdempotencyExpired,
  newLockToken,
  slugOfScope,
} from './common.js';
import {
  type ArchivedDecision,
  type CommitBatch,
  type IdempotencyRecord,
  type RoomLock,
  type RoomRecord,
  type RoomStore,
  type RoomVersion,
  StoreConflictError,
  type StoredEvent,
  type StoredReceipt,
  StoreUnavailableError,
} from './port.js';
import {
  defineEngagementCommands,
  type EngagementRedis,
  engagementKeys,
  RedisEngagementStore,
} from './redis-engagement.js';
import { connectRedisClient, createRedisClient, type RedisClient } from './redis-connection.js';
import {
  FAIR_ACQUIRE_SCRIPT,
  FAIR_RELEASE_SCRIPT,
  knownArgs,
  LEAVE_LINE_SCRIPT,
  LockWakes,
  readAcquired,
  WAITER_LEASE_MS,
  WAITER_POLL_MS,
} from './redis-room-lock.js';
import { RoomLeases } from './redis-room-lease.js';
import { defineLogCommands, RedisLogStore } from './redis-tlog.js';
import { LOG_LEASE_SLUG } from './tlog-port.js';
import {
  COMMIT_SCRIPT,
  CONFLICT_REPLY,
  DELETE_ROOM_SCRIPT,
  LOAD_IF_CHANGED_SCRIPT,
  RENEW_LOCK_SCRIPT,
  REPAIR_DEADLINE_SCRIPT,
} from './redis-scripts.js';

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
}

/** A request that gets no answer within this time fails as unavailable instead of hanging. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
/** How long a commit waits for its replicas (REDIS_WAIT_REPLICAS) before it fails as unavailable. */
export const DEFAULT_WAIT_TIMEOUT_MS = 1000;

type Arg = string | number | Buffer;

/**
 * How long a room seen to exist (loaded, committed, checked) is taken to exist without asking again.
 * Only the order of checks rests on it (a request to a room deleted meanwhile by another process
 * answers not-found from the load or lock that follows, instead of from the existence check); the
 * request is then as if it had come just before the deletion.
 */
export const EXISTS_MEMO_MS = 1000;
const EXISTS_MEMO_MAX = 10_000;

interface ScriptCommands {
  conclaveCommit(...args: Arg[]): Promise<[number, number, string, number]>;
  conclaveDeleteRoom(...args: Arg[]): Promise<number>;
  conclaveAcquireLock(...args: Arg[]): Promise<0 | [number, string | null, string | null, (string | null)[]?]>;
  conclaveLoadIfChanged(...args: Arg[]): Promise<(string | null)[] | null>;
  conclaveReleaseLock(...args: Arg[]): Promise<number>;
  conclaveLeaveLine(...args: Arg[]): Promise<number>;
  conclaveRenewLock(...args: Arg[]): Promise<number>;
  conclaveRepairDeadline(...args: Arg[]): Promise<number>;
}

type ScriptedRedis = EngagementRedis & ScriptCommands;

export async function openRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  const redis = createRedisClient(options.url, {
    cluster: options.cluster ?? false,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    role: 'commands',
  });
  // The key count varies with the idempotency records: the caller passes it first.
  redis.defineCommand('conclaveCommit', { lua: COMMIT_SCRIPT });
  redis.defineCommand('conclaveDeleteRoom', { numberOfKeys: 8, lua: DELETE_ROOM_SCRIPT });
  redis.defineCommand('conclaveLoadIfChanged', { numberOfKeys: 1, lua: LOAD_IF_CHANGED_SCRIPT });
  redis.defineCommand('conclaveAcquireLock', { numberOfKeys: 4, lua: FAIR_ACQUIRE_SCRIPT });
  redis.defineCommand('conclaveReleaseLock', { numberOfKeys: 2, lua: FAIR_RELEASE_SCRIPT });
  redis.defineCommand('conclaveLeaveLine', { numberOfKeys: 3, lua: LEAVE_LINE_SCRIPT });
  redis.defineCommand('conclaveRenewLock', { numberOfKeys: 1, lua: RENEW_LOCK_SCRIPT });
  redis.defineCommand('conclaveRepairDeadline', { numberOfKeys: 1, lua: REPAIR_DEADLINE_SCRIPT });
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
  return new RedisStore(
    redis as ScriptedRedis,
    keyPrefix,
    options.clock ?? Date.now,
    { replicas: options.waitReplicas ?? 0, timeoutMs: options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS },
    options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    wakeListener,
  );
}

const DEADLINE_SHARDS = 16;

/** FNV-1a of the slug, onto a deadline shard. */
function shardOf(slug: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < slug.length; i++) {
    hash ^= slug.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % DEADLINE_SHARDS;
}

function keysOf(prefix: string) {
  const room = (slug: string) => `${prefix}room:{${slug}}`;
  return {
    slugs: `${prefix}slugs`,
    meta: `${prefix}meta`,
    /** The deadline index of earlier versions: one sorted set. Read (and emptied) until it is gone. */
    legacyDeadlines: `${prefix}deadlines`,
    /** The deadline index, sharded so every commit's index update does not land on one Cluster node. */
    deadlineShards: Array.from({ length: DEADLINE_SHARDS }, (_, i) => `${prefix}deadlines:{d${i}}`),
    deadlines: (slug: string) => `${prefix}deadlines:{d${shardOf(slug)}}`,
    room,
    events: (slug: string) => `${room(slug)}:events`,
    eventIds: (slug: string) => `${room(slug)}:eventids`,
    receipts: (slug: string) => `${room(slug)}:receipts`,
    archived: (slug: string) => `${room(slug)}:archived`,
    lock: (slug: string) => `${room(slug)}:lock`,
    /** Who waits for the lock, in order, and each waiter's lease (redis-room-lock.ts). */
    lockQueue: (slug: string) => `${room(slug)}:lockq`,
    lockLeases: (slug: string) => `${room(slug)}:lockl`,
    /** The channel on which a let-go lock wakes its waiters; the message is the slug. */
    lockWakes: `${prefix}lockwakes`,
    links: (key: string) => `${prefix}links:${key}`,
    /** Under the room's hash tag when the scope names a room, so the commit script can write it. */
    idempotency: (scope: string) => {
      const slug = slugOfScope(scope);
      return slug === null ? `${prefix}idem:${scope}` : `${room(slug)}:idem:${scope}`;
    },
  };
}

export class RedisStore implements RoomStore {
  readonly kind = 'redis' as const;
  readonly engagement: RedisEngagementStore;
  readonly tlog: RedisLogStore;
  private readonly key: ReturnType<typeof keysOf>;
  private readonly wakes = new LockWakes();
  /** The room locks this process holds or lets linger, and what holding them tells (redis-room-lease.ts). */
  private readonly leases = new RoomLeases((slug, token) => this.releaseLock(slug, token));
  /** Rooms seen to exist, until when (performance.now()); see EXISTS_MEMO_MS. */
  private readonly existing = new Map<string, number>();
  /** Deadline index updates a commit did not wait for (afterCommit). */
  private readonly unawaited = new Set<Promise<void>>();

  /** Use openRedisStore(), which defines the scripts and connects first. */
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keyPrefix: string,
    private readonly clock: () => number,
    private readonly replication: { replicas: number; timeoutMs: number } = { replicas: 0, timeoutMs: 0 },
    private readonly deadlineMs = DEFAULT_COMMAND_TIMEOUT_MS,
    private readonly wakeListener: RedisClient | null = null,
  ) {
    this.key = keysOf(keyPrefix);
    wakeListener?.on('message', (channel: string, slug: string) => {
      if (channel !== this.key.lockWakes) return;
      this.wakes.heard(slug);
      this.leases.wanted(slug);
    });
    this.engagement = new RedisEngagementStore(redis, keyPrefix, this.key.room, {
      call: (operation) => this.call(operation),
      bestEffort: (operation) => this.bestEffort(operation),
    });
    this.tlog = new RedisLogStore(redis as unknown as ConstructorParameters<typeof RedisLogStore>[0], keyPrefix, {
      call: (operation) => this.call(operation),
      replication,
      leaseKey: this.key.lock(LOG_LEASE_SLUG),
      roomKey: this.key.room,
      slugsKey: this.key.slugs,
    });
  }

  linkRoom(key: string, slug: string, at: number): Promise<void> {
    return this.call(async () => {
      await this.redis.zadd(this.key.links(key), at, slug);
    });
  }

  linkedRooms(key: string, limit: number): Promise<string[]> {
    return this.call(() => this.redis.zrevrange(this.key.links(key), 0, limit - 1));
  }

  reserveSlug(slug: string): Promise<boolean> {
    return this.call(async () => (await this.redis.sadd(this.key.slugs, slug)) === 1);
  }

  load(slug: string): Promise<RoomRecord | null> {
    return this.call(async () =>
      this.seen(
        slug,
        recordOf(
          slug,
          await this.redis.hmget(this.key.room(slug), 'version', 'head', 'snapshot', 'next_deadline', 'revision'),
        ),
      ),
    );
  }

  /** Answered here, without Redis, while this process holds the room's lock at `known` (redis-room-lease.ts). */
  loadIfChanged(slug: string, known: RoomVersion): Promise<RoomRecord | 'unchanged' | null> {
    if (this.leases.current(slug, known)) return Promise.resolve('unchanged');
    return this.call(async () => {
      const fields = await this.redis.conclaveLoadIfChanged(this.key.room(slug), known.version, known.revision ?? '');
      if (fields?.[0] === 'unchanged') return this.seen(slug, 'unchanged');
      return this.seen(slug, fields ? recordOf(slug, fields) : null);
    });
  }

  /** Answered here while this process holds the room's lock, or saw the room within EXISTS_MEMO_MS. */
  roomExists(slug: string): Promise<boolean> {
    if (this.leases.exists(slug) || (this.existing.get(slug) ?? 0) > performance.now()) return Promise.resolve(true);
    return this.call(
      async () => this.seen(slug, (await this.redis.hexists(this.key.room(slug), 'version')) === 1 || null) !== null,
    );
  }

  /** Notes whether a read found the room (anything but null), for roomExists; returns what it read. */
  private seen<T>(slug: string, found: T | null): T | null {
    if (found === null) {
      this.existing.delete(slug);
      return null;
    }
    if (this.existing.size >= EXISTS_MEMO_MAX && !this.existing.has(slug)) this.existing.clear();
    this.existing.set(slug, performance.now() + EXISTS_MEMO_MS);
    return found;
  }

  async commit(batch: CommitBatch): Promise<RoomRecord> {
    assertBatchShape(batch);
    const { slug } = batch;
    const records = batch.idempotency ?? [];
    // Records of the room's own scopes live in its hash slot and commit inside the script.
    const inScript = records.filter((record) => slugOfScope(record.scope) === slug);
    const separate = records.filter((record) => slugOfScope(record.scope) !== slug);
    const release = batch.release_lock && batch.fence !== undefined ? batch.fence : null;
    const lingerTtl = release === null ? null : this.leases.lingerTtl(slug, release);
    const args: Arg[] = [
      7 + inScript.length,
      this.key.room(slug),
      this.key.events(slug),
      this.key.eventIds(slug),
      this.key.receipts(slug),
      this.key.lock(slug),
      this.key.archived(slug),
      this.key.lockQueue(slug),
      ...inScript.map((record) => this.key.idempotency(record.scope)),
      batch.expected_version,
      batch.fence ?? '',
      batch.snapshot,
      batch.next_deadline ?? '',
      ...encodeEvents(batch.events),
      ...encodeReceipts(batch.receipts),
      inScript.length,
      ...inScript.flatMap((record) => [JSON.stringify(record), this.idempotencyTtl(record)]),
      ...encodeArchived(batch.archived ?? []),
      batch.expected_revision ?? '',
      randomUUID(),
      // A lock this process took lingers after the commit unless someone waits (redis-room-lease.ts).
      release === null ? '' : lingerTtl === null ? '1' : '2',
      this.key.lockWakes,
      slug,
      lingerTtl ?? '',
    ];
    const sentAt = performance.now();
    let version: number;
    let head: number;
    let revision: string;
    let kept: number;
    try {
      [version, head, revision, kept] = await this.call(() =>
        this.replication.replicas > 0 ? this.commitReplicated(args) : this.redis.conclaveCommit(...args),
      );
    } catch (error) {
      if (batch.fence !== undefined) this.leases.lost(slug, batch.fence);
      throw error;
    }
    if (release !== null) this.leases.committed(slug, release, sentAt, { version, revision }, kept === 1);
    this.seen(slug, true);
    await this.afterCommit(batch, version, separate);
    return { slug, version, head, snapshot: batch.snapshot, next_deadline: batch.next_deadline, revision };
  }

  /**
   * The commit script and WAIT in one pipeline: on a Cluster both go to the room's master, so WAIT
   * counts the replicas of exactly that write. Too few replicas within the timeout is a failure the
   * caller answers with 503; the write may still have landed, and the client's retry with its
   * Idempotency-Key gets the stored result.
   */
  private async commitReplicated(args: Arg[]): Promise<[number, number, string, number]> {
    const { replicas, timeoutMs } = this.replication;
    const pipeline = this.redis.pipeline() as unknown as ScriptCommands & {
      wait(replicas: number, timeout: number): unknown;
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    pipeline.conclaveCommit(...args);
    pipeline.wait(replicas, timeoutMs);
    const replies = await pipeline.exec();
    const [commitError, committed] = replies?.[0] ?? [new Error('no reply to the commit')];
    if (commitError) throw commitError;
    const [waitError, acknowledged] = replies?.[1] ?? [new Error('no reply to WAIT')];
    if (waitError) throw waitError;
    if (Number(acknowledged) < replicas) {
      throw new StoreUnavailableError(
        `the write reached ${Number(acknowledged)} of the ${replicas} Redis replicas required within ${timeoutMs} ms`,
      );
    }
    return committed as [number, number, string, number];
  }

  events(slug: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return Promise.resolve([]);
    return this.call(async () => {
      const members = await this.redis.zrangebyscore(this.key.events(slug), `(${afterSeq}`, '+inf', 'LIMIT', 0, limit);
      return members.map((member) => JSON.parse(member) as StoredEvent);
    });
  }

  eventById(slug: string, id: string): Promise<StoredEvent | null> {
    return this.call(async () => {
      const seq = await this.redis.hget(this.key.eventIds(slug), id);
      if (seq === null) return null;
      const [member] = await this.redis.zrangebyscore(this.key.events(slug), seq, seq);
      return member === undefined ? null : (JSON.parse(member) as StoredEvent);
    });
  }

  receipts(slug: string): Promise<StoredReceipt[]> {
    return this.call(async () => {
      const items = await this.redis.lrange(this.key.receipts(slug), 0, -1);
      return items.map((item) => JSON.parse(item) as StoredReceipt);
    });
  }

  archivedDecisions(slug: string, afterSeq = 0): Promise<ArchivedDecision[]> {
    return this.call(async () => {
      const members = await this.redis.zrangebyscoreBuffer(this.key.archived(slug), `(${afterSeq}`, '+inf');
      return members.map(decodeArchived);
    });
  }

  roomSlugs(cursor: string, limit: number): Promise<{ slugs: string[]; cursor: string | null }> {
    return this.call(async () => {
      const [next, slugs] = await this.redis.sscan(this.key.slugs, cursor === '' ? '0' : cursor, 'COUNT', limit);
      return { slugs, cursor: next === '0' ? null : next };
    });
  }

  meta(key: string): Promise<string | null> {
    return this.call(() => this.redis.hget(this.key.meta, key));
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.call(async () => {
      await this.redis.hset(this.key.meta, key, value);
    });
  }

  idempotency(scope: string): Promise<IdempotencyRecord | null> {
    return this.call(async () => {
      const text = await this.redis.get(this.key.idempotency(scope));
      if (text === null) return null;
      const record = JSON.parse(text) as IdempotencyRecord;
      // Redis expires the key on its own time; the injected clock is checked too.
      return isIdempotencyExpired(record, this.clock()) ? null : record;
    });
  }

  async deleteRoom(slug: string): Promise<boolean> {
    const engagement = engagementKeys(this.key.room(slug));
    const removed = await this.call(() =>
      this.redis.conclaveDeleteRoom(
        this.key.room(slug),
        this.key.events(slug),
        this.key.eventIds(slug),
        this.key.receipts(slug),
        this.key.archived(slug),
        engagement.webhooks,
        engagement.deliveries,
        engagement.openerWakes,
      ),
    );
    this.existing.delete(slug);
    await this.bestEffort(async () => {
      await Promise.all([
        this.redis.zrem(this.key.deadlines(slug), slug),
        this.redis.zrem(this.key.legacyDeadlines, slug),
      ]);
    });
    return removed === 1;
  }

  /**
   * Takes the room's lock in its turn (redis-room-lock.ts): tried at once, then again on each wake
   * or every WAITER_POLL_MS, until `waitMs` has passed; a waiter that gives up leaves the line.
   */
  async lock(slug: string, ttlMs: number, waitMs: number, known?: RoomVersion | null): Promise<RoomLock> {
    // The lock this process let linger after its last commit on the room: no round trip.
    const reused = this.leases.reuse(slug);
    if (reused) return this.held(slug, reused.token, ttlMs, reused.found);
    const token = newLockToken();
    const keys = [this.key.lock(slug), this.key.room(slug), this.key.lockQueue(slug), this.key.lockLeases(slug)];
    const [knownVersion, knownRevision] = knownArgs(known);
    const giveUpAt = Date.now() + waitMs;
    let taken: ReturnType<typeof readAcquired> = null;
    let sentAt = 0;
    for (;;) {
      const wake = this.wakes.arm(slug);
      try {
        sentAt = performance.now();
        const reply = await this.call(() =>
          this.redis.conclaveAcquireLock(
            ...keys,
            token,
            ttlMs,
            WAITER_LEASE_MS,
            knownVersion,
            knownRevision,
            this.key.lockWakes,
            slug,
          ),
        );
        taken = readAcquired(slug, reply, recordOf);
        if (taken) break;
      } catch (error) {
        wake.disarm();
        await this.leaveLine(slug, token);
        throw error;
      }
      const remaining = giveUpAt - Date.now();
      if (remaining <= 0) {
        wake.disarm();
        await this.leaveLine(slug, token);
        throw new StoreUnavailableError(`room ${slug} is locked; gave up after ${waitMs} ms`);
      }
      await wake.sleep(Math.min(remaining, WAITER_POLL_MS));
    }
    this.leases.taken(slug, token, ttlMs, sentAt, taken.found);
    if (taken.found !== null) this.seen(slug, true);
    return this.held(slug, token, ttlMs, taken.found, taken.loaded);
  }

  /** The handle of a lock this process holds under `token`. */
  private held(
    slug: string,
    token: string,
    ttlMs: number,
    found: RoomVersion | null,
    loaded?: RoomRecord | null,
  ): RoomLock {
    const key = this.key.lock(slug);
    return {
      slug,
      token,
      found,
      ...(loaded !== undefined ? { loaded } : {}),
      renew: async () => {
        const sentAt = performance.now();
        let ok = false;
        try {
          ok = (await this.redis.conclaveRenewLock(key, token, ttlMs)) === 1;
        } catch {
          ok = false;
        }
        this.leases.renewed(slug, token, sentAt, ok);
        return ok;
      },
      release: () => {
        this.leases.released(slug, token);
        return this.releaseLock(slug, token);
      },
    };
  }

  /** Compare-and-delete of the room's lock, waking its line; never throws. */
  private releaseLock(slug: string, token: string): Promise<void> {
    return this.bestEffort(() =>
      this.redis.conclaveReleaseLock(this.key.lock(slug), this.key.lockQueue(slug), token, this.key.lockWakes, slug),
    );
  }

  /** A waiter that gives up leaves the room's line at once rather than when its lease lapses. */
  private leaveLine(slug: string, token: string): Promise<void> {
    return this.bestEffort(() =>
      this.redis.conclaveLeaveLine(
        this.key.lock(slug),
        this.key.lockQueue(slug),
        this.key.lockLeases(slug),
        token,
        this.key.lockWakes,
        slug,
      ),
    );
  }

  /**
   * Due rooms from the deadline index, each checked against the room's own next_deadline, which
   * is the truth. An entry that disagrees (left by a crash between commit and index update, or by
   * two index updates landing out of order) is repaired, so a stale entry cannot keep waking the
   * scheduler for a room that has nothing due; the room is still listed when its true deadline
   * has passed.
   */
  dueRooms(nowMs: number, limit: number): Promise<string[]> {
    if (limit <= 0) return Promise.resolve([]);
    return this.call(async () => {
      const indexes = [...this.key.deadlineShards, this.key.legacyDeadlines];
      const pages = await Promise.all(
        indexes.map((key) => this.redis.zrangebyscore(key, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, limit)),
      );
      const candidates: { key: string; slug: string; score: number }[] = [];
      pages.forEach((flat, i) => {
        for (let j = 0; j < flat.length; j += 2) {
          candidates.push({ key: indexes[i]!, slug: flat[j]!, score: Number(flat[j + 1]) });
        }
      });
      candidates.sort((a, b) => a.score - b.score);
      candidates.splice(limit);
      const truths = await Promise.all(
        candidates.map(async ({ slug }) => {
          const stored = await this.redis.hget(this.key.room(slug), 'next_deadline');
          return stored ? Number(stored) : null;
        }),
      );
      const repairs: Promise<void>[] = [];
      const due = candidates.filter(({ key, slug, score }, i) => {
        const truth = truths[i] ?? null;
        if (key === this.key.legacyDeadlines) {
          // An entry of the old single index moves to its shard as it is read.
          repairs.push(
            this.bestEffort(async () => {
              if (truth !== null) await this.redis.zadd(this.key.deadlines(slug), 'NX', truth, slug);
              await this.redis.conclaveRepairDeadline(key, slug, score, '');
            }),
          );
        } else if (truth !== score) {
          repairs.push(this.bestEffort(() => this.redis.conclaveRepairDeadline(key, slug, score, truth ?? '')));
        }
        return truth !== null && truth <= nowMs;
      });
      await Promise.all(repairs);
      // A room can stand in its shard and in the old index at once.
      return [...new Set(due.map(({ slug }) => slug))];
    });
  }

  nextDeadline(): Promise<number | null> {
    return this.call(async () => {
      const firsts = await Promise.all(
        [...this.key.deadlineShards, this.key.legacyDeadlines].map((key) => this.redis.zrange(key, 0, 0, 'WITHSCORES')),
      );
      const scores = firsts.filter((first) => first[1] !== undefined).map((first) => Number(first[1]));
      return scores.length === 0 ? null : Math.min(...scores);
    });
  }

  ping(): Promise<void> {
    return this.call(async () => {
      await this.redis.ping();
    });
  }

  /**
   * Scans every node's keyspace for idempotency keys (`<prefix>idem:<scope>`, `<room>:idem:<scope>`) and deletes those whose record
   * body is not sealed. SCAN walks the keyspace in steps, so Redis keeps serving meanwhile; each step
   * has the store's deadline of its own (the whole walk may take longer than one command may). Once a
   * walk completes a marker key says so, and later starts skip it: records written since are sealed.
   */
  async reclaimHistory(slug: string): Promise<number> {
    const engagement = engagementKeys(this.key.room(slug));
    const removed = await this.call(() => this.redis.zcard(this.key.events(slug)));
    // One slot (the room's hash tag): one DEL. Due-index entries of the deliveries go as orphans.
    await this.call(() =>
      this.redis.del(
        this.key.events(slug),
        this.key.eventIds(slug),
        engagement.webhooks,
        engagement.deliveries,
        engagement.openerWakes,
      ),
    );
    return removed;
  }

  async purgeUnsealedIdempotency(): Promise<number> {
    const done = `${this.keyPrefix}meta:idempotency-sealed`;
    if ((await this.call(() => this.redis.get(done))) !== null) return 0;
    let removed = 0;
    const prefix = escapeGlob(this.keyPrefix);
    for (const [node, pattern] of scanNodes(this.redis).flatMap((n) => [
      [n, `${prefix}idem:*`] as const,
      [n, `${prefix}room:*:idem:*`] as const,
    ])) {
      let cursor = '0';
      do {
        const [next, keys] = await this.call(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        for (const key of keys) {
          const text = await this.call(() => this.redis.get(key));
          if (text === null || isSealedRecord(text)) continue;
          removed += await this.call(() => this.redis.del(key));
        }
      } while (cursor !== '0');
    }
    await this.call(() => this.redis.set(done, new Date(this.clock()).toISOString()));
    return removed;
  }

  async close(): Promise<void> {
    await this.leases.releaseAll();
    await Promise.all([...this.unawaited]);
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

  /**
   * The single-key follow-ups of a successful commit. They run after the room script because they
   * live outside the room's hash slot, and they are best effort: the commit is already durable
   * and acknowledged. That is safe because the deadline index is only an optimisation (a room's
   * due work is resolved lazily whenever it is touched, and dueRooms repairs stale entries), the
   * slug was normally reserved before creation, and a lost room-less idempotency record only
   * means a retry executes afresh. The deadline index update is not even awaited: the answer need
   * not wait one more round trip for an optimisation, and this process's later commands (its next
   * update of the same entry included) follow it on the same connection.
   */
  private async afterCommit(batch: CommitBatch, version: number, separateRecords: IdempotencyRecord[]): Promise<void> {
    const { slug } = batch;
    const indexed = this.bestEffort(() =>
      batch.next_deadline === null
        ? this.redis.zrem(this.key.deadlines(slug), slug)
        : this.redis.zadd(this.key.deadlines(slug), batch.next_deadline, slug),
    );
    // Not awaited here, but close() lets it land (a clean shutdown keeps the index whole).
    this.unawaited.add(indexed);
    void indexed.finally(() => this.unawaited.delete(indexed));
    await Promise.all([
      // The log's queue (redis-tlog.ts): a receipt lost here is found by the integrator's sweep.
      batch.receipts.length > 0
        ? this.bestEffort(() =>
            this.tlog.enqueue(
              batch.receipts.map((r) => ({ slug, sequence: r.sequence, jws: r.jws, receipt_hash: r.receipt_hash })),
            ),
          )
        : undefined,
      version === 1 ? this.bestEffort(() => this.redis.sadd(this.key.slugs, slug)) : undefined,
      ...separateRecords.map((record) =>
        this.bestEffort(() =>
          this.redis.set(this.key.idempotency(record.scope), JSON.stringify(record), 'PX', this.idempotencyTtl(record)),
        ),
      ),
    ]);
  }

  private idempotencyTtl(record: IdempotencyRecord): number {
    return Math.max(1, record.created_at + IDEMPOTENCY_TTL_MS - this.clock());
  }

  /**
   * One store operation, answered or failed within the command timeout of its first command.
   * ioredis times each command from when it is written, and auto-pipelining writes a command only
   * once the pipeline ahead of it on the same node is answered: against a frozen Redis a command
   * would otherwise wait out the timeout of the one before it first.
   */
  private async call<T>(operation: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`Redis store unavailable: no answer within ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
    });
    try {
      return await Promise.race([operation(), deadline]);
    } catch (error) {
      throw toStoreError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  private async bestEffort(operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch {
      // See the callers for why losing this write is acceptable.
    }
  }
}

/** A room from its hash's fields (version, head, snapshot, next_deadline, revision); null when absent. */
function recordOf(slug: string, fields: (string | null | undefined)[]): RoomRecord | null {
  const [version, head, snapshot, nextDeadline, revision] = fields;
  if (version === null || version === undefined) return null;
  return {
    slug,
    version: Number(version),
    head: Number(head),
    snapshot: snapshot ?? '',
    next_deadline: nextDeadline ? Number(nextDeadline) : null,
    ...(revision ? { revision } : {}),
  };
}

function encodeEvents(events: StoredEvent[]): Arg[] {
  const args: Arg[] = [events.length];
  for (const e of events) {
    const stored: StoredEvent = {
      id: e.id,
      seq: e.seq,
      event_type: e.event_type,
      occurred_at: e.occurred_at,
      decision_id: e.decision_id,
      data: e.data,
      actor: e.actor,
    };
    args.push(e.seq, e.id, JSON.stringify(stored));
  }
  return args;
}

/**
 * Archived decisions are written once and read whole, so they are stored deflated: a decision's
 * data repeats its ballots in its seal, and the room's footprint should stay near the history it
 * serves.
 */
function encodeArchived(archived: ArchivedDecision[]): Arg[] {
  const args: Arg[] = [archived.length];
  for (const a of archived) {
    const stored: ArchivedDecision = { decision_id: a.decision_id, seq: a.seq, data: a.data };
    args.push(a.seq, Buffer.concat([DEFLATED, deflateRawSync(JSON.stringify(stored))]));
  }
  return args;
}

/** Marks a deflated archive entry (a plain JSON entry, `{`, is read as it is). */
const DEFLATED = Buffer.from([1]);

function decodeArchived(stored: Buffer): ArchivedDecision {
  const text =
    stored[0] === DEFLATED[0] ? inflateRawSync(stored.subarray(1)).toString('utf8') : stored.toString('utf8');
  return JSON.parse(text) as ArchivedDecision;
}

function encodeReceipts(receipts: StoredReceipt[]): Arg[] {
  const args: Arg[] = [receipts.length];
  for (const r of receipts) {
    const stored: StoredReceipt = {
      sequence: r.sequence,
      decision_id: r.decision_id,
      jws: r.jws,
      receipt_hash: r.receipt_hash,
    };
    args.push(r.sequence, JSON.stringify(stored));
  }
  return args;
}

/** Reply errors that mean Redis cannot serve right now, as opposed to a bad request. */
const TRANSIENT_REPLY = /^(LOADING|BUSY|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|OOM|MISCONF|NOREPLICAS)\b/;

function toStoreError(error: unknown): unknown {
  if (error instanceof StoreConflictError || error instanceof StoreUnavailableError) return error;
  if (!(error instanceof Error)) return error;
  if (error.name === 'ReplyError') {
    if (error.message.startsWith(CONFLICT_REPLY)) {
      return new StoreConflictError(error.message.slice(CONFLICT_REPLY.length).trim());
    }
    if (!TRANSIENT_REPLY.test(error.message)) return error;
  }
  // Everything else ioredis throws is about the connection: closed, not writable, timed out.
  return new StoreUnavailableError(`Redis store unavailable: ${error.message}`, { cause: error });
}

/** Every master of a Cluster, or the one server. */
function scanNodes(redis: ScriptedRedis): Pick<ScriptedRedis, 'scan'>[] {
  const cluster = redis as unknown as { nodes?: (role: 'master') => Pick<ScriptedRedis, 'scan'>[] };
  return typeof cluster.nodes === 'function' ? cluster.nodes('master') : [redis];
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

function isSealedRecord(text: string): boolean {
  try {
    const record = JSON.parse(text) as Partial<IdempotencyRecord>;
    return typeof record.body === 'string' && record.body.startsWith(SEALED_BODY_PREFIX);
  } catch {
    return false;
  }
}
