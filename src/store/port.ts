/**
 * The storage port. The runtime speaks only this interface; `sqlite-store.ts` (embedded default)
 * and `redis-store.ts` (many processes) implement it, and one contract suite runs against both.
 *
 * A room is stored as: a versioned snapshot (the persisted XState snapshot, opaque JSON text here),
 * an append-only event log with a monotonic per-room `seq`, the receipts of its chain, and the
 * idempotency records of the commands applied to it. One command's changes commit atomically with
 * a version check, so a writer that lost its lock can never overwrite a newer state (fencing).
 */

import type { EngagementStore } from './engagement-port.js';
import type { FrozenLogStore, LogStore } from './tlog-port.js';

export interface StoredEvent {
  /** UUID, unique across the service. */
  id: string;
  /** Per-room, 1-based, strictly increasing, no gaps. */
  seq: number;
  event_type: string;
  /** ISO 8601 with milliseconds and Z. */
  occurred_at: string;
  decision_id: string | null;
  data: Record<string, unknown>;
  /** Participant id of the actor, or null for deadline-caused events and operator acts. Not served on the wire. */
  actor: string | null;
}

export interface StoredReceipt {
  /** 1-based position in the room's chain. */
  sequence: number;
  /** Null for the conclusion receipt. */
  decision_id: string | null;
  jws: string;
  receipt_hash: string;
}

/**
 * A resolved decision moved out of its room's live state: the decision actor's data as JSON text,
 * stored once, append-only, and read back by the runtime for views.
 */
export interface ArchivedDecision {
  decision_id: string;
  seq: number;
  data: string;
}

export interface IdempotencyRecord {
  /**
   * Scope key: `<slug>|<hash of (credential hash, operation, key)>`, with `-` in place of the slug
   * when the operation addresses no existing room (room creation, discovery).
   * The slug prefix lets the Redis adapter keep a room's records under the room's hash tag and
   * write them inside the room's atomic commit; SQLite treats the scope as opaque. Scopes without
   * a `|`, or whose slug is `-` or names a room other than the batch's, are still stored and found,
   * but the Redis adapter then writes them right after the room commit instead of inside it.
   */
  scope: string;
  /** JCS text (or its hash) of the request that produced this record. */
  fingerprint: string;
  status: number;
  /** Exact response body text, so a replay is byte-identical. */
  body: string;
  /** Epoch ms when the record was stored; records older than 24 h are ignored and may be purged. */
  created_at: number;
}

export interface RoomRecord {
  slug: string;
  /** 1 after creation, +1 per commit. */
  version: number;
  /** Highest event seq (0 when the room has no events). */
  head: number;
  /** Opaque JSON text owned by the runtime. */
  snapshot: string;
  /** Epoch ms of the room's next deadline, or null. */
  next_deadline: number | null;
  /**
   * Which commit produced this version (Redis: a random id per commit; absent on SQLite and on rooms
   * last written before revisions existed). Versions count commits; after a Redis failover two
   * histories can reach the same count, and the revision tells them apart.
   */
  revision?: string;
}

/** What a commit stored, and what the store learnt in the same write. */
export interface CommittedRoom extends RoomRecord {
  /**
   * Whether the room had webhook subscriptions at the commit, on a store that can tell in the same
   * write (Redis: one EXISTS inside the commit script). False lets the engagement skip reading them
   * for this commit; absent means unknown (read them).
   */
  subscribed?: boolean;
}

export interface CommitBatch {
  slug: string;
  /** The version the writer read; 0 to create the room. The commit fails unless it still matches. */
  expected_version: number;
  snapshot: string;
  /** Must continue the log exactly: events[0].seq === stored head + 1, consecutive. */
  events: StoredEvent[];
  /** Must continue the chain: receipts[0].sequence === stored chain length + 1, consecutive. */
  receipts: StoredReceipt[];
  /** The records of the commands this commit applies (a drained mailbox batch holds several). */
  idempotency?: IdempotencyRecord[];
  /** Epoch ms of the next deadline (window end, proposal end, settle end) or null for none. */
  next_deadline: number | null;
  /** Resolved decisions leaving the snapshot with this commit. */
  archived?: ArchivedDecision[];
  /** When given, the commit also fails unless this lock token still holds the room's lock. */
  fence?: string;
  /**
   * With `fence`: the commit also lets the lock go (and wakes whoever waits for it), so the next
   * holder need not wait for a separate release. A refused commit releases nothing.
   */
  release_lock?: boolean;
  /** When given (the revision the writer read), the commit also fails unless the room is still at it. */
  expected_revision?: string;
}

/** Where a cached room stands: its version and the store's revision of it (Redis; absent on SQLite and on rooms older than revisions). */
export interface RoomVersion {
  version: number;
  revision?: string | undefined;
}

/** Thrown by commit() when expected_version (or the fence) does not match the stored room. */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** Thrown by any operation when the backing store cannot be reached (mapped to 503). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export interface RoomLock {
  readonly slug: string;
  /** Random token; also the fencing value checked by commit({fence}). */
  readonly token: string;
  /**
   * Extends the lock by its TTL if it is still ours (compare-and-expire); false when it was lost.
   * Never throws. A holder renews while its turn runs; a frozen or dead one cannot, so its lock lapses.
   */
  renew(): Promise<boolean>;
  /** Releases only if the lock is still ours (compare-and-delete). Never throws. */
  release(): Promise<void>;
  /**
   * Where the room stood when the lock was taken, read in the same round trip (Redis; null: no room).
   * A holder whose cached room is at it needs no further check (docs/architecture.md, "One room, many processes").
   */
  readonly found?: RoomVersion | null;
  /**
   * The room as stored when the lock was taken, read in the same round trip, when the caller said
   * what it has cached and the store holds something else (null: no room). Absent when the cache is
   * current or the caller did not ask.
   */
  readonly loaded?: RoomRecord | null;
}

export interface RoomStore {
  readonly kind: 'sqlite' | 'redis';

  /**
   * Set by a store that several processes share and that announces each room commit itself on its
   * deployment's commit channel (Redis: the commit script publishes `{origin, slug, head}`, in the
   * same round trip as the write); the origin its announcements carry, so that this process skips
   * its own.
   */
  readonly commitOrigin?: string;

  /** Opener-seal wakes, webhook subscriptions and their delivery outbox (engagement-port.ts). */
  readonly engagement: EngagementStore;

  /** The transparency log of every receipt, as commitments (tlog-port.ts, docs/transparency-log.md). */
  readonly tlog: LogStore;

  /** The frozen v1 log, whose leaves are whole receipts: read only (docs/transparency-log.md, The frozen v1 log). */
  readonly frozenTlog: FrozenLogStore;

  /** Claims a slug forever. False when it was ever claimed before (even if the room was deleted). */
  reserveSlug(slug: string): Promise<boolean>;

  load(slug: string): Promise<RoomRecord | null>;

  /**
   * The room, or 'unchanged' when it is still at `known` (same version and revision): one round trip,
   * and the snapshot is sent only when it changed. A process whose cached room is current checks it
   * without reading the whole snapshot (docs/architecture.md, "One room, many processes").
   */
  loadIfChanged(slug: string, known: RoomVersion): Promise<RoomRecord | 'unchanged' | null>;

  /** Whether the room is stored, without reading its snapshot. */
  roomExists(slug: string): Promise<boolean>;

  /** Atomic: snapshot + version bump + events + receipts + idempotency record + deadline. */
  commit(batch: CommitBatch): Promise<CommittedRoom>;

  /** Events with seq > afterSeq, ascending, at most `limit`. */
  events(slug: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;

  eventById(slug: string, id: string): Promise<StoredEvent | null>;

  /** The room's receipts in chain order. */
  receipts(slug: string): Promise<StoredReceipt[]>;

  /** The room's archived decisions with seq > afterSeq, in seq order (append-only: read what is new). */
  archivedDecisions(slug: string, afterSeq?: number): Promise<ArchivedDecision[]>;

  /** The record stored under this scope, or null (also null once older than 24 h). */
  idempotency(scope: string): Promise<IdempotencyRecord | null>;

  /** Removes the room, its events, receipts and deadline. The slug stays reserved. */
  deleteRoom(slug: string): Promise<boolean>;

  /**
   * Acquires the room's lock (SET NX PX semantics), retrying until `waitMs` elapses.
   * Throws StoreUnavailableError when it cannot be acquired in time. With `known` (what the caller
   * has cached; null: nothing) a store that can reads the room in the same round trip when it
   * differs (`RoomLock.loaded`).
   */
  lock(slug: string, ttlMs: number, waitMs: number, known?: RoomVersion | null): Promise<RoomLock>;

  /** Slugs whose next_deadline <= nowMs, earliest first, at most `limit`. */
  dueRooms(nowMs: number, limit: number): Promise<string[]>;

  /** Earliest next_deadline across all rooms, or null. */
  nextDeadline(): Promise<number | null>;

  /**
   * Remembers that a credential holds a seat in a room (key: a token hash, `sub:<mandate subject>`
   * or `acct:<hosted account>`), so `list_rooms` can answer. An index only: rooms stay the truth,
   * and links to deleted rooms are skipped by the reader.
   */
  linkRoom(key: string, slug: string, at: number): Promise<void>;

  /** Slugs linked to a credential key, most recently linked first, at most `limit`. */
  linkedRooms(key: string, limit: number): Promise<string[]>;

  /**
   * A page of every room's slug (and, on Redis, of slugs reserved for rooms since deleted: `load`
   * tells). Start with cursor '' and continue while the returned cursor is not null.
   */
  roomSlugs(cursor: string, limit: number): Promise<{ slugs: string[]; cursor: string | null }>;

  /** Service-wide settings the runtime records in the store (the snapshot format reached, say). */
  meta(key: string): Promise<string | null>;
  setMeta(key: string, value: string): Promise<void>;

  /** Throws StoreUnavailableError when the store cannot serve requests. */
  ping(): Promise<void>;

  /**
   * Retention (store/retention.ts): deletes a room's event history, its webhooks with their
   * deliveries and its opener wakes, keeping the room (live state, seats, conclusion), its archived
   * decisions and its receipts. Returns how many events went. The caller holds the room's lock.
   */
  reclaimHistory(slug: string): Promise<number>;

  /**
   * Deletes idempotency records whose body is not sealed (written raw, credentials included, by an
   * earlier version); returns how many. Run at every start (docs/architecture.md, Credentials).
   */
  purgeUnsealedIdempotency(): Promise<number>;

  close(): Promise<void>;
}
