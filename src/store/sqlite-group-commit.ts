/**
 * Group commit for the embedded store (docs/architecture.md, Storage): the writes handed in during
 * one turn of the event loop are written in one transaction and share one fsync, which runs off the
 * main thread (sqlite-wal-sync.ts) when the database has a WAL file.
 */
import type Database from 'better-sqlite3';
import { StoreUnavailableError } from './port.js';
import { toStoreError } from './sqlite-statements.js';
import type { WalSync } from './sqlite-wal-sync.js';

/** A write waiting for the group it will be written in. */
interface PendingWrite {
  work: () => unknown;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

type WriteOutcome = { ok: unknown } | { error: unknown };

export class GroupCommit {
  private readonly groupTransaction: Database.Transaction<(group: PendingWrite[]) => WriteOutcome[]>;
  private pending: PendingWrite[] = [];
  /** Set once a sync has failed: no later write can be promised durable. */
  private durabilityLost: StoreUnavailableError | undefined;
  /** Write groups (transactions) so far, and the writes they held (for tests and the bench). */
  readonly stats = { groups: 0, batches: 0 };

  /**
   * With `walSync`, a group's transaction skips SQLite's own fsync and its writers wait for the
   * off-thread one; without it (`:memory:`, which has no WAL), the connection's setting applies.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly walSync?: WalSync,
  ) {
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
  }

  /**
   * Group commit: writes handed in during one turn of the event loop (room commits of different
   * rooms, slug reservations, seat links) are written in one transaction, so they share one fsync.
   * Each promise settles only after the transaction holding its write is durable, or with that
   * write's own failure.
   */
  write<T>(work: () => T): Promise<T> {
    if (this.durabilityLost) return Promise.reject(this.durabilityLost);
    if (!this.db.open) return Promise.reject(new StoreUnavailableError('the SQLite store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (result: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Writes the pending group now; its writers are answered once it is durable. */
  flush(): void {
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    let outcomes: WriteOutcome[];
    try {
      if (this.durabilityLost) throw this.durabilityLost;
      if (!this.db.open) throw new StoreUnavailableError('the SQLite store is closed');
      outcomes = this.writeGroup(group);
    } catch (error) {
      const mapped = toStoreError(error);
      for (const item of group) item.reject(mapped);
      return;
    }
    this.stats.groups += 1;
    this.stats.batches += group.length;
    const settle = () =>
      group.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if ('ok' in outcome) item.resolve(outcome.ok);
        else item.reject(outcome.error);
      });
    if (!this.walSync) {
      settle();
      return;
    }
    this.walSync.whenDurable().then(settle, (error: unknown) => {
      this.loseDurability(error);
      for (const item of group) item.reject(this.durabilityLost);
    });
  }

  /** Settles once every group written so far is durable (or durability was lost). */
  async drain(): Promise<void> {
    this.flush();
    await this.walSync?.whenDurable().catch(() => undefined);
  }

  private writeGroup(group: PendingWrite[]): WriteOutcome[] {
    if (!this.walSync) return this.groupTransaction.immediate(group);
    // Only this transaction skips SQLite's fsync: the connection's other writes (lock taking,
    // wake consumption, deletions) keep `synchronous = FULL`. The level cannot change inside a
    // transaction, and a prepared PRAGMA applies when compiled, not when run: hence exec, twice.
    this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      return this.groupTransaction.immediate(group);
    } finally {
      this.db.exec('PRAGMA synchronous = FULL');
    }
  }

  /**
   * After a failed fsync the kernel may have dropped the pages it could not write while SQLite
   * counts them as written: the store stops taking writes, and closes so that reads stop too
   * (answered "store unavailable", 503). A restart reads back what the disk really holds.
   */
  private loseDurability(error: unknown): void {
    if (this.durabilityLost) return;
    this.durabilityLost = new StoreUnavailableError(
      'the SQLite store could not sync its writes to disk; restart the service once the disk is healthy',
      { cause: error },
    );
    if (this.db.open) this.db.close();
  }
}
