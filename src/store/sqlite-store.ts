/**
 * Embedded RoomStore on SQLite (better-sqlite3). One file holds every room; several processes may
 * open the same file, coordinating through SQLite's own file locking and the `locks` table.
 */
import { secureDatabaseFiles } from './file-modes.js';
import Database from 'better-sqlite3';
import {
  acquireWithin,
  assertBatchShape,
  assertContinues,
  IDEMPOTENCY_TTL_MS,
  SEALED_BODY_PREFIX,
  isAtVersion,
  isIdempotencyExpired,
  newLockToken,
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
import { SqliteEngagementStore } from './sqlite-engagement.js';
import { migrate } from './sqlite-schema.js';
import { SqliteLogStore } from './sqlite-tlog.js';

export interface SqliteStoreOptions {
  /** Database file path, or ':memory:' for a private throwaway store. */
  file: string;
  /** Epoch ms; governs idempotency record age. Defaults to Date.now. */
  clock?: () => number;
}

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;
/** Expired idempotency rows are deleted at most this often, during a commit. */
const PURGE_INTERVAL_MS = 60_000;

/** A write waiting for the group it will be written in. */
interface PendingWrite {
  work: () => unknown;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

type WriteOutcome = { ok: unknown } | { error: unknown };

interface RoomRow {
  slug: string;
  version: number;
  head: number;
  chain_length: number;
  snapshot: string;
  next_deadline: number | null;
}

interface EventRow {
  id: string;
  seq: number;
  event_type: string;
  occurred_at: string;
  decision_id: string | null;
  data: string;
  actor: string | null;
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const clock = options.clock ?? Date.now;
  let db: Database.Database | undefined;
  try {
    secureDatabaseFiles(options.file);
    db = new Database(options.file);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Deleted rows are zeroed where that costs no extra I/O (the purge below zeroes everything).
    db.pragma('secure_delete = FAST');
    db.pragma('journal_mode = WAL');
    // FULL fsyncs the WAL at every commit: an acknowledged commit survives kill -9 and power loss.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, clock());
  } catch (error) {
    db?.close();
    // Whatever stops the file from opening or migrating, the store cannot serve.
    const mapped = toStoreError(error);
    throw mapped instanceof StoreUnavailableError
      ? mapped
      : new StoreUnavailableError(`cannot open the SQLite store ${options.file}`, { cause: error });
  }
  return new SqliteStore(db, clock);
}

function prepareStatements(db: Database.Database) {
  return {
    reserveSlug: db.prepare<[string, number]>('INSERT OR IGNORE INTO slugs (slug, reserved_at) VALUES (?, ?)'),
    loadRoom: db.prepare<[string], RoomRow>(
      'SELECT slug, version, head, chain_length, snapshot, next_deadline FROM rooms WHERE slug = ?',
    ),
    insertRoom: db.prepare<[string, number, number, string, number | null]>(
      'INSERT INTO rooms (slug, version, head, chain_length, snapshot, next_deadline) VALUES (?, 1, ?, ?, ?, ?)',
    ),
    updateRoom: db.prepare<[number, number, string, number | null, string, number]>(
      `UPDATE rooms SET version = version + 1, head = ?, chain_length = ?, snapshot = ?, next_deadline = ?
       WHERE slug = ? AND version = ?`,
    ),
    deleteRoom: db.prepare<[string]>('DELETE FROM rooms WHERE slug = ?'),
    insertEvent: db.prepare<[string, number, string, string, string, string | null, string, string | null]>(
      `INSERT INTO events (slug, seq, id, event_type, occurred_at, decision_id, data, actor)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    eventsAfter: db.prepare<[string, number, number], EventRow>(
      `SELECT id, seq, event_type, occurred_at, decision_id, data, actor FROM events
       WHERE slug = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    eventById: db.prepare<[string, string], EventRow>(
      'SELECT id, seq, event_type, occurred_at, decision_id, data, actor FROM events WHERE id = ? AND slug = ?',
    ),
    insertReceipt: db.prepare<[string, number, string | null, string, string]>(
      'INSERT INTO receipts (slug, sequence, decision_id, jws, receipt_hash) VALUES (?, ?, ?, ?, ?)',
    ),
    insertArchived: db.prepare<[string, number, string, string]>(
      'INSERT INTO archived_decisions (slug, seq, decision_id, data) VALUES (?, ?, ?, ?)',
    ),
    archived: db.prepare<[string, number], ArchivedDecision>(
      'SELECT decision_id, seq, data FROM archived_decisions WHERE slug = ? AND seq > ? ORDER BY seq',
    ),
    receipts: db.prepare<[string], StoredReceipt>(
      'SELECT sequence, decision_id, jws, receipt_hash FROM receipts WHERE slug = ? ORDER BY sequence',
    ),
    upsertIdempotency: db.prepare<[string, string, number, string, number]>(
      `INSERT INTO idempotency (scope, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (scope) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
         body = excluded.body, created_at = excluded.created_at`,
    ),
    idempotency: db.prepare<[string], IdempotencyRecord>(
      'SELECT scope, fingerprint, status, body, created_at FROM idempotency WHERE scope = ?',
    ),
    purgeIdempotency: db.prepare<[number]>('DELETE FROM idempotency WHERE created_at <= ?'),
    purgeUnsealed: db.prepare<[number, string]>('DELETE FROM idempotency WHERE substr(body, 1, ?) <> ?'),
    takeLock: db.prepare<[string, string, number, number]>(
      `INSERT INTO locks (slug, token, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (slug) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
       WHERE locks.expires_at <= ?`,
    ),
    lockHolder: db.prepare<[string], { token: string; expires_at: number }>(
      'SELECT token, expires_at FROM locks WHERE slug = ?',
    ),
    releaseLock: db.prepare<[string, string]>('DELETE FROM locks WHERE slug = ? AND token = ?'),
    renewLock: db.prepare<[number, string, string]>('UPDATE locks SET expires_at = ? WHERE slug = ? AND token = ?'),
    dueRooms: db.prepare<[number, number], { slug: string }>(
      `SELECT slug FROM rooms WHERE next_deadline IS NOT NULL AND next_deadline <= ?
       ORDER BY next_deadline, slug LIMIT ?`,
    ),
    nextDeadline: db.prepare<[], { next_deadline: number }>(
      'SELECT next_deadline FROM rooms WHERE next_deadline IS NOT NULL ORDER BY next_deadline LIMIT 1',
    ),
    ping: db.prepare('SELECT 1'),
    roomSlugs: db.prepare<[string, number], { slug: string }>(
      'SELECT slug FROM rooms WHERE slug > ? ORDER BY slug LIMIT ?',
    ),
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare<[string, string]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    linkRoom: db.prepare<[string, string, number]>(
      `INSERT INTO room_links (key, slug, linked_at) VALUES (?, ?, ?)
       ON CONFLICT (key, slug) DO UPDATE SET linked_at = excluded.linked_at`,
    ),
    linkedRooms: db.prepare<[string, number], { slug: string }>(
      'SELECT slug FROM room_links WHERE key = ? ORDER BY linked_at DESC, slug LIMIT ?',
    ),
  };
}

export class SqliteStore implements RoomStore {
  readonly kind = 'sqlite' as const;
  readonly engagement: SqliteEngagementStore;
  readonly tlog: SqliteLogStore;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly groupTransaction: Database.Transaction<(group: PendingWrite[]) => WriteOutcome[]>;
  private pending: PendingWrite[] = [];
  /** Write groups (transactions) so far, and the writes they held (for tests and the bench). */
  readonly commitStats = { groups: 0, batches: 0 };
  private readonly takeLockTransaction: Database.Transaction<(slug: string, token: string, ttlMs: number) => boolean>;
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  /** Use openSqliteStore(), which configures the connection and migrates the schema first. */
  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number,
  ) {
    this.sql = prepareStatements(db);
    this.engagement = new SqliteEngagementStore(
      db,
      (work) => this.run(work),
      (work) => this.grouped(work),
    );
    this.tlog = new SqliteLogStore(
      db,
      (work) => this.run(work),
      (work) => this.grouped(work),
    );
    // Each write runs in its own savepoint (better-sqlite3 nests transactions that way): a write
    // that fails, such as a commit that conflicts, rolls back alone and the rest of its group commits.
    const inSavepoint = db.transaction((work: () => unknown) => work());
    this.groupTransaction = db.transaction((group) =>
      group.map(({ work }): WriteOutcome => {
        try {
          return { ok: inSavepoint(work) };
        } catch (error) {
          return { error: toStoreError(error) };
        }
      }),
    );
    // Lock expiry is wall time, not the injected clock: it measures real process liveness, as
    // Redis's PX does, and must agree between processes sharing the file.
    this.takeLockTransaction = db.transaction((slug, token, ttlMs) => {
      const now = Date.now();
      return this.sql.takeLock.run(slug, token, now + ttlMs, now).changes === 1;
    });
  }

  reserveSlug(slug: string): Promise<boolean> {
    return this.grouped(() => this.sql.reserveSlug.run(slug, this.clock()).changes === 1);
  }

  load(slug: string): Promise<RoomRecord | null> {
    return this.run(() => {
      const row = this.sql.loadRoom.get(slug);
      return row ? toRoomRecord(row) : null;
    });
  }

  /** The embedded store is local: reading the row is as cheap as comparing its version. */
  async loadIfChanged(slug: string, known: RoomVersion): Promise<RoomRecord | 'unchanged' | null> {
    const record = await this.load(slug);
    return record && isAtVersion(record, known) ? 'unchanged' : record;
  }

  async roomExists(slug: string): Promise<boolean> {
    return (await this.load(slug)) !== null;
  }

  commit(batch: CommitBatch): Promise<RoomRecord> {
    return this.grouped(() => this.commitInTransaction(batch));
  }

  /**
   * Group commit: writes handed in during one turn of the event loop (room commits of different
   * rooms, slug reservations, seat links) are written in one transaction, so they share one fsync
   * (`synchronous = FULL`). Each promise settles only after the transaction holding its write is
   * durable, or with that write's own failure.
   */
  private grouped<T>(work: () => T): Promise<T> {
    if (!this.db.open) return Promise.reject(new StoreUnavailableError('the SQLite store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (result: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(() => this.flushWrites());
    });
  }

  private flushWrites(): void {
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    let outcomes: WriteOutcome[];
    try {
      if (!this.db.open) throw new StoreUnavailableError('the SQLite store is closed');
      outcomes = this.groupTransaction.immediate(group);
    } catch (error) {
      const mapped = toStoreError(error);
      for (const item of group) item.reject(mapped);
      return;
    }
    this.commitStats.groups += 1;
    this.commitStats.batches += group.length;
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if ('ok' in outcome) item.resolve(outcome.ok);
      else item.reject(outcome.error);
    });
  }

  events(slug: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
    return this.run(() => (limit > 0 ? this.sql.eventsAfter.all(slug, afterSeq, limit).map(toStoredEvent) : []));
  }

  eventById(slug: string, id: string): Promise<StoredEvent | null> {
    return this.run(() => {
      const row = this.sql.eventById.get(id, slug);
      return row ? toStoredEvent(row) : null;
    });
  }

  receipts(slug: string): Promise<StoredReceipt[]> {
    return this.run(() => this.sql.receipts.all(slug));
  }

  archivedDecisions(slug: string, afterSeq = 0): Promise<ArchivedDecision[]> {
    return this.run(() => this.sql.archived.all(slug, afterSeq));
  }

  idempotency(scope: string): Promise<IdempotencyRecord | null> {
    return this.run(() => {
      const record = this.sql.idempotency.get(scope);
      return record && !isIdempotencyExpired(record, this.clock()) ? record : null;
    });
  }

  deleteRoom(slug: string): Promise<boolean> {
    // Events and receipts go with the room row (ON DELETE CASCADE); the slug row stays.
    return this.run(() => this.sql.deleteRoom.run(slug).changes === 1);
  }

  async lock(slug: string, ttlMs: number, waitMs: number): Promise<RoomLock> {
    const token = newLockToken();
    const tryTake = () => this.run(() => this.takeLockTransaction.immediate(slug, token, ttlMs));
    await acquireWithin(slug, waitMs, tryTake);
    return {
      slug,
      token,
      renew: async () => {
        if (!this.db.open) return false;
        try {
          return this.sql.renewLock.run(Date.now() + ttlMs, slug, token).changes === 1;
        } catch {
          return false;
        }
      },
      release: async () => {
        if (!this.db.open) return;
        try {
          this.sql.releaseLock.run(slug, token);
        } catch {
          // Never throws: an unreleased lock simply expires.
        }
      },
    };
  }

  linkRoom(key: string, slug: string, at: number): Promise<void> {
    return this.grouped(() => {
      this.sql.linkRoom.run(key, slug, at);
    });
  }

  linkedRooms(key: string, limit: number): Promise<string[]> {
    return this.run(() => this.sql.linkedRooms.all(key, limit).map((row) => row.slug));
  }

  dueRooms(nowMs: number, limit: number): Promise<string[]> {
    return this.run(() => (limit > 0 ? this.sql.dueRooms.all(nowMs, limit).map((row) => row.slug) : []));
  }

  nextDeadline(): Promise<number | null> {
    return this.run(() => this.sql.nextDeadline.get()?.next_deadline ?? null);
  }

  roomSlugs(cursor: string, limit: number): Promise<{ slugs: string[]; cursor: string | null }> {
    return this.run(() => {
      const slugs = this.sql.roomSlugs.all(cursor, limit).map((row) => row.slug);
      return { slugs, cursor: slugs.length < limit ? null : slugs.at(-1)! };
    });
  }

  meta(key: string): Promise<string | null> {
    return this.run(() => this.sql.meta.get(key)?.value ?? null);
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.grouped(() => {
      this.sql.setMeta.run(key, value);
    });
  }

  ping(): Promise<void> {
    return this.run(() => {
      this.sql.ping.get();
    });
  }

  reclaimHistory(slug: string): Promise<number> {
    return this.run(() =>
      this.db
        .transaction(() => {
          const removed = this.db.prepare('DELETE FROM events WHERE slug = ?').run(slug).changes;
          // Deliveries go with their webhooks (ON DELETE CASCADE).
          this.db.prepare('DELETE FROM webhooks WHERE slug = ?').run(slug);
          this.db.prepare('DELETE FROM opener_wakes WHERE slug = ?').run(slug);
          return removed;
        })
        .immediate(),
    );
  }

  purgeUnsealedIdempotency(): Promise<number> {
    return this.run(() => {
      // secure_delete ON zeroes the rows' bytes, free pages included; the checkpoint then writes those
      // pages into the database file over the old ones and empties the WAL.
      this.db.pragma('secure_delete = ON');
      try {
        const removed = this.sql.purgeUnsealed.run(SEALED_BODY_PREFIX.length, SEALED_BODY_PREFIX).changes;
        if (removed > 0) this.db.pragma('wal_checkpoint(TRUNCATE)');
        return removed;
      } finally {
        this.db.pragma('secure_delete = FAST');
      }
    });
  }

  async close(): Promise<void> {
    // Commits already handed in are written before the file closes.
    this.flushWrites();
    if (this.db.open) this.db.close();
  }

  private commitInTransaction(batch: CommitBatch): RoomRecord {
    assertBatchShape(batch);
    const { slug } = batch;
    const row = this.sql.loadRoom.get(slug);
    if (batch.expected_version === 0 ? row !== undefined : row?.version !== batch.expected_version) {
      throw new StoreConflictError(
        `room ${slug} is at version ${row?.version ?? 0}, the commit expected ${batch.expected_version}`,
      );
    }
    if (batch.fence !== undefined) this.assertFence(slug, batch.fence);
    const head = row?.head ?? 0;
    const chainLength = row?.chain_length ?? 0;
    assertContinues(batch, head, chainLength);

    const newHead = head + batch.events.length;
    const newChainLength = chainLength + batch.receipts.length;
    if (row === undefined) {
      // Creation claims the slug too, so it can never be handed out again.
      this.sql.reserveSlug.run(slug, this.clock());
      this.sql.insertRoom.run(slug, newHead, newChainLength, batch.snapshot, batch.next_deadline);
    } else {
      this.sql.updateRoom.run(newHead, newChainLength, batch.snapshot, batch.next_deadline, slug, row.version);
    }
    for (const e of batch.events) {
      this.sql.insertEvent.run(
        slug,
        e.seq,
        e.id,
        e.event_type,
        e.occurred_at,
        e.decision_id,
        JSON.stringify(e.data),
        e.actor,
      );
    }
    for (const r of batch.receipts) {
      this.sql.insertReceipt.run(slug, r.sequence, r.decision_id, r.jws, r.receipt_hash);
    }
    for (const a of batch.archived ?? []) this.sql.insertArchived.run(slug, a.seq, a.decision_id, a.data);
    for (const i of batch.idempotency ?? []) {
      this.sql.upsertIdempotency.run(i.scope, i.fingerprint, i.status, i.body, i.created_at);
    }
    this.purgeExpiredIdempotency();
    if (batch.release_lock && batch.fence !== undefined) this.sql.releaseLock.run(slug, batch.fence);
    return {
      slug,
      version: (row?.version ?? 0) + 1,
      head: newHead,
      snapshot: batch.snapshot,
      next_deadline: batch.next_deadline,
    };
  }

  private assertFence(slug: string, token: string): void {
    const holder = this.sql.lockHolder.get(slug);
    if (!holder || holder.token !== token || holder.expires_at <= Date.now()) {
      throw new StoreConflictError(`the lock token no longer holds room ${slug}`);
    }
  }

  private purgeExpiredIdempotency(): void {
    const now = this.clock();
    if (now - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = now;
    this.sql.purgeIdempotency.run(now - IDEMPOTENCY_TTL_MS);
  }

  /** Runs a synchronous database call, turning it into the port's promise and error vocabulary. */
  private async run<T>(work: () => T): Promise<T> {
    if (!this.db.open) throw new StoreUnavailableError('the SQLite store is closed');
    try {
      return work();
    } catch (error) {
      throw toStoreError(error);
    }
  }
}

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOLFS|AUTH|NOTADB|CORRUPT)/;

function toStoreError(error: unknown): unknown {
  if (error instanceof StoreConflictError || error instanceof StoreUnavailableError) return error;
  if (error instanceof Database.SqliteError) {
    // A duplicate key means the batch collides with stored rows, e.g. an event id used before.
    if (error.code.startsWith('SQLITE_CONSTRAINT')) return new StoreConflictError(error.message);
    if (UNAVAILABLE_CODES.test(error.code)) {
      return new StoreUnavailableError(`SQLite store unavailable: ${error.message}`, { cause: error });
    }
  }
  return error;
}

function toRoomRecord(row: RoomRow): RoomRecord {
  return {
    slug: row.slug,
    version: row.version,
    head: row.head,
    snapshot: row.snapshot,
    next_deadline: row.next_deadline,
  };
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    seq: row.seq,
    event_type: row.event_type,
    occurred_at: row.occurred_at,
    decision_id: row.decision_id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    actor: row.actor,
  };
}
