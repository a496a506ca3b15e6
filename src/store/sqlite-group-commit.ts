/**
 * Group commit for the embedded store (docs/architecture.md, Storage): the writes handed in during
 * one turn of the event loop are written in one transaction and share one fsync.
 */
import type Database from 'better-sqlite3';
import { StoreUnavailableError } from './port.js';
import { toStoreError } from './sqlite-statements.js';

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
  /** Write groups (transactions) so far, and the writes they held (for tests and the bench). */
  readonly stats = { groups: 0, batches: 0 };

  constructor(private readonly db: Database.Database) {
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
   * rooms, slug reservations, seat links) are written in one transaction, so they share one fsync
   * (`synchronous = FULL`). Each promise settles only after the transaction holding its write is
   * durable, or with that write's own failure.
   */
  write<T>(work: () => T): Promise<T> {
    if (!this.db.open) return Promise.reject(new StoreUnavailableError('the SQLite store is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (result: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  flush(): void {
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
    this.stats.groups += 1;
    this.stats.batches += group.length;
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if ('ok' in outcome) item.resolve(outcome.ok);
      else item.reject(outcome.error);
    });
  }
}
