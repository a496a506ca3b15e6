/**
 * Embedded RoomStore on SQLite (better-sqlite3). One file holds every room; several processes may
 * open the same file, coordinating through SQLite's own file locking and the `locks` table.
 * The SQL is in sqlite-statements.ts, group commit in sqlite-group-commit.ts, a room commit's
 * checks and writes in sqlite-commit.ts.
 */
import { secureDatabaseFiles } from './file-modes.js';
import Database from 'better-sqlite3';
import { acquireWithin, isAtVersion, isIdempotencyExpired, newLockToken, SEALED_BODY_PREFIX } from './common.js';
import {
  type ArchivedDecision,
  type CommitBatch,
  type IdempotencyRecord,
  type RoomLock,
  type RoomRecord,
  type RoomStore,
  type RoomVersion,
  type StoredEvent,
  type StoredReceipt,
  StoreUnavailableError,
} from './port.js';
import { SqliteRoomCommit } from './sqlite-commit.js';
import { SqliteEngagementStore } from './sqlite-engagement.js';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WalCheckpointer } from './sqlite-checkpointer.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { type SyncFile, WalSync } from './sqlite-wal-sync.js';
import { migrate } from './sqlite-schema.js';
import {
  prepareStatements,
  type SqlStatements,
  toRoomRecord,
  toStoredEvent,
  toStoreError,
} from './sqlite-statements.js';
import { FROZEN_LOG_TABLES, SqliteLogStore } from './sqlite-tlog.js';

export interface SqliteStoreOptions {
  /** Database file path, or ':memory:' for a private throwaway store. */
  file: string;
  /** Epoch ms; governs idempotency record age. Defaults to Date.now. */
  clock?: () => number;
  /** How write groups flush the WAL to the disk: fdatasync(2), unless a test holds it back. */
  syncFile?: SyncFile;
}

/** How long a statement waits for another process's write lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const clock = options.clock ?? Date.now;
  let db: Database.Database | undefined;
  let walSync: WalSync | undefined;
  let checkpointer: WalCheckpointer | undefined;
  try {
    secureDatabaseFiles(options.file);
    db = new Database(options.file);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Deleted rows are zeroed where that costs no extra I/O (the purge below zeroes everything).
    db.pragma('secure_delete = FAST');
    const journal = db.pragma('journal_mode = WAL', { simple: true });
    // FULL fsyncs the WAL at every commit: an acknowledged commit survives kill -9 and power loss.
    // Write groups sync the WAL off the main thread instead (sqlite-wal-sync.ts), to the same effect.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, clock());
    // ':memory:' has no WAL (journal mode "memory"): nothing to sync or checkpoint.
    if (journal === 'wal') {
      walSync = new WalSync(`${db.name}-wal`, options.syncFile);
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
      checkpointer = new WalCheckpointer(db.name);
    }
  } catch (error) {
    walSync?.close();
    db?.close();
    // Whatever stops the file from opening or migrating, the store cannot serve.
    const mapped = toStoreError(error);
    throw mapped instanceof StoreUnavailableError
      ? mapped
      : new StoreUnavailableError(`cannot open the SQLite store ${options.file}`, { cause: error });
  }
  return new SqliteStore(db, clock, walSync, checkpointer);
}

export class SqliteStore implements RoomStore {
  readonly kind = 'sqlite' as const;
  readonly engagement: SqliteEngagementStore;
  readonly tlog: SqliteLogStore;
  readonly frozenTlog: SqliteLogStore;
  private readonly sql: SqlStatements;
  private readonly writes: GroupCommit;
  private readonly roomCommit: SqliteRoomCommit;
  /** Write groups (transactions) so far, and the writes they held (for tests and the bench). */
  readonly commitStats: { groups: number; batches: number };
  private readonly takeLockTransaction: Database.Transaction<(slug: string, token: string, ttlMs: number) => boolean>;

  /** Use openSqliteStore(), which configures the connection and migrates the schema first. */
  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number,
    private readonly walSync?: WalSync,
    private readonly checkpointer?: WalCheckpointer,
  ) {
    this.sql = prepareStatements(db);
    this.writes = new GroupCommit(db, walSync);
    this.commitStats = this.writes.stats;
    this.roomCommit = new SqliteRoomCommit(this.sql, clock);
    this.engagement = new SqliteEngagementStore(
      db,
      (work) => this.run(work),
      (work) => this.writes.write(work),
    );
    this.tlog = new SqliteLogStore(
      db,
      (work) => this.run(work),
      (work) => this.writes.write(work),
    );
    this.frozenTlog = new SqliteLogStore(
      db,
      (work) => this.run(work),
      (work) => this.writes.write(work),
      FROZEN_LOG_TABLES,
    );
    // Lock expiry is wall time, not the injected clock: it measures real process liveness, as
    // Redis's PX does, and must agree between processes sharing the file.
    this.takeLockTransaction = db.transaction((slug, token, ttlMs) => {
      const now = Date.now();
      return this.sql.takeLock.run(slug, token, now + ttlMs, now).changes === 1;
    });
  }

  reserveSlug(slug: string): Promise<boolean> {
    return this.writes.write(() => this.sql.reserveSlug.run(slug, this.clock()).changes === 1);
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
    return this.writes.write(() => this.roomCommit.apply(batch));
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
      // Renewed in the write group (sqlite-group-commit.ts): the log lease is renewed every
      // integration pass, and a write of its own cost the main thread an fsync of its own each time.
      renew: () =>
        this.writes
          .write(() => this.sql.renewLock.run(Date.now() + ttlMs, slug, token).changes === 1)
          .catch(() => false),
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
    return this.writes.write(() => {
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
    return this.writes.write(() => {
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
    // Commits already handed in are written, and made durable, before the file closes.
    await this.writes.drain();
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
    this.walSync?.close();
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
