/**
 * The fsync of the embedded store's write groups, off the main thread (docs/architecture.md,
 * Storage). A write group's transaction runs with `synchronous = NORMAL`, which writes its WAL
 * frames without syncing them; this then syncs the WAL file on libuv's thread pool, and the group's
 * writers are answered once that sync is done. The main thread meanwhile parses, decides and writes
 * the next group instead of waiting in fsync. What reaches the disk is what `synchronous = FULL`
 * would have synced: in WAL mode a commit is its frames in the WAL, and SQLite still syncs the WAL
 * and the database file itself around every checkpoint.
 *
 * Syncs coalesce: groups written while one sync is under way are covered by the next one, which
 * starts when it ends, so a burst of groups costs two fsyncs, not one each.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

/** Flushes a file's written data to the disk (fdatasync(2) by default). */
export type SyncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export class WalSync {
  private fd: number | undefined;
  private waiting: Waiter[] = [];
  private syncing = false;
  private failure: Error | undefined;

  /**
   * `walFile` must exist (SQLite creates it with the connection's first transaction in WAL mode)
   * and stays the same file while the connection is open: SQLite resets and truncates it in place,
   * and deletes it only when the last connection closes.
   */
  constructor(
    walFile: string,
    private readonly syncFile: SyncFile = fdatasync,
  ) {
    this.fd = openSync(walFile, 'r');
  }

  /**
   * Settles once everything written to the WAL before this call is on the disk: with a sync that
   * starts after it. Rejects if that sync fails, and from then on at once: after a failed fsync
   * the kernel may have dropped the pages it could not write, so nothing later can be promised.
   */
  whenDurable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.fd === undefined) return Promise.reject(new Error('the WAL file is closed'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.syncing) this.startSync();
    });
  }

  /** Closes the file descriptor, once; call after the last whenDurable() has settled. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private startSync(): void {
    const covered = this.waiting;
    this.waiting = [];
    this.syncing = true;
    this.syncFile(this.fd!, (error) => {
      this.syncing = false;
      if (error) {
        this.failure = new Error(`fsync of the WAL failed (${error.code ?? error.message})`, { cause: error });
        for (const waiter of [...covered, ...this.waiting]) waiter.reject(this.failure);
        this.waiting = [];
        return;
      }
      for (const waiter of covered) waiter.resolve();
      if (this.waiting.length > 0) this.startSync();
    });
  }
}
