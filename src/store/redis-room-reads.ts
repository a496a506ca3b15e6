/**
 * A room's record and existence on Redis, with what this process already knows: a room whose lock it
 * holds is answered from the lease (redis-room-lease.ts), and a room seen to exist lately from the
 * existence memo (docs/architecture.md, "One room, many processes").
 */
import type { RoomRecord, RoomVersion } from './port.js';
import type { DeadlineCalls, ScriptedRedis } from './redis-calls.js';
import { recordOf } from './redis-codec.js';
import type { RedisKeys } from './redis-keys.js';
import { RedisCompaction } from './redis-compaction.js';
import type { RoomLeases } from './redis-room-lease.js';

/**
 * How long a room seen to exist (loaded, committed, checked) is taken to exist without asking again.
 * Only the order of checks rests on it (a request to a room deleted meanwhile by another process
 * answers not-found from the load or lock that follows, instead of from the existence check); the
 * request is then as if it had come just before the deletion.
 */
export const EXISTS_MEMO_MS = 1000;
const EXISTS_MEMO_MAX = 10_000;

/** Rooms seen to exist, until when (performance.now()); see EXISTS_MEMO_MS. */
export class ExistenceMemo {
  private readonly existing = new Map<string, number>();

  /** True while the room counts as seen to exist. */
  fresh(slug: string): boolean {
    return (this.existing.get(slug) ?? 0) > performance.now();
  }

  /** Notes whether a read found the room (anything but null), for roomExists; returns what it read. */
  seen<T>(slug: string, found: T | null): T | null {
    if (found === null) {
      this.existing.delete(slug);
      return null;
    }
    if (this.existing.size >= EXISTS_MEMO_MAX && !this.existing.has(slug)) this.existing.clear();
    this.existing.set(slug, performance.now() + EXISTS_MEMO_MS);
    return found;
  }

  /** The room was deleted. */
  forget(slug: string): void {
    this.existing.delete(slug);
  }
}

export class RedisRoomReads {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly key: RedisKeys,
    private readonly calls: DeadlineCalls,
    private readonly leases: RoomLeases,
    private readonly memo: ExistenceMemo,
    private readonly compaction: RedisCompaction,
  ) {}

  load(slug: string): Promise<RoomRecord | null> {
    return this.calls.call(async () => {
      const fields = await this.redis.hmget(
        this.key.room(slug),
        'version',
        'head',
        'snapshot',
        'next_deadline',
        'revision',
        'compacted',
      );
      return this.memo.seen(slug, fields[5] ? await this.loadCompacted(slug) : recordOf(slug, fields));
    });
  }

  /** A room that was compacted when its hash was read: its record read with its compact value, in one script. */
  async loadCompacted(slug: string): Promise<RoomRecord | null> {
    const read = await this.compaction.read(slug, 'load');
    if (read.compacted) return RedisCompaction.recordOf(slug, read);
    // Expanded meanwhile (a write): the script read the hash as it is now.
    return recordOf(
      slug,
      (read.reply as (Buffer | null)[]).map((field) => field?.toString('utf8') ?? null),
    );
  }

  /** Answered here, without Redis, while this process holds the room's lock at `known` (redis-room-lease.ts). */
  loadIfChanged(slug: string, known: RoomVersion): Promise<RoomRecord | 'unchanged' | null> {
    if (this.leases.current(slug, known)) return Promise.resolve('unchanged');
    return this.calls.call(async () => {
      const fields = await this.redis.conclaveLoadIfChanged(this.key.room(slug), known.version, known.revision ?? '');
      if (fields?.[0] === 'unchanged') return this.memo.seen(slug, 'unchanged');
      if (fields?.[5]) return this.memo.seen(slug, await this.loadCompacted(slug));
      return this.memo.seen(slug, fields ? recordOf(slug, fields) : null);
    });
  }

  /** Answered here while this process holds the room's lock, or saw the room within EXISTS_MEMO_MS. */
  roomExists(slug: string): Promise<boolean> {
    if (this.leases.exists(slug) || this.memo.fresh(slug)) return Promise.resolve(true);
    return this.calls.call(
      async () =>
        this.memo.seen(slug, (await this.redis.hexists(this.key.room(slug), 'version')) === 1 || null) !== null,
    );
  }
}
