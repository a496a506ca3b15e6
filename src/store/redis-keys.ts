/** The Redis store's key layout (docs/architecture.md, Storage): every key of a room under its `{slug}` hash tag. */
import { slugOfScope } from './common.js';

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

export function keysOf(prefix: string) {
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
    /** A compacted room's history in one value (redis-compaction.ts); absent while the room is expanded. */
    compact: (slug: string) => `${room(slug)}:compact`,
    /** Held by the one process whose timer sweeps for rooms to compact this period (redis-compaction.ts). */
    compactSweep: `${prefix}compact-sweep`,
    lock: (slug: string) => `${room(slug)}:lock`,
    /** Who waits for the lock, in order, and each waiter's lease (redis-room-lock.ts). */
    lockQueue: (slug: string) => `${room(slug)}:lockq`,
    lockLeases: (slug: string) => `${room(slug)}:lockl`,
    /** The channel on which a let-go lock wakes its waiters; the message is the slug. */
    lockWakes: `${prefix}lockwakes`,
    /**
     * The broadcast channel on which earlier versions announced every room commit, as `{origin, slug,
     * head}`; the commit script still PUBLISHes there with COMMIT_NOTICES=both (a rolling upgrade).
     */
    commits: `${prefix}commits`,
    /**
     * The room's own commit channel, under its hash tag so the commit script (which runs on the
     * room's node) can SPUBLISH it (engagement/redis-fanout.ts): only the processes waiting on the
     * room subscribe to it.
     */
    roomCommits: (slug: string) => `${room(slug)}:commits`,
    links: (key: string) => `${prefix}links:${key}`,
    /** Under the room's hash tag when the scope names a room, so the commit script can write it. */
    idempotency: (scope: string) => {
      const slug = slugOfScope(scope);
      return slug === null ? `${prefix}idem:${scope}` : `${room(slug)}:idem:${scope}`;
    },
  };
}

export type RedisKeys = ReturnType<typeof keysOf>;
