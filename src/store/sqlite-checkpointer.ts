/**
 * WAL checkpoints of the embedded store, on a worker thread (docs/architecture.md, Storage). SQLite
 * checkpoints at the end of whichever commit finds the WAL over its limit: it copies the WAL's
 * pages into the database file and fsyncs both, inside that commit, on the main thread (measured:
 * about 6 % of the main thread under `choose` across 1,000 rooms). Here a connection of its own, on
 * a worker, runs a PASSIVE checkpoint every CHECKPOINT_INTERVAL_MS, which never blocks the writer;
 * the main connection keeps an automatic checkpoint only as a backstop, far above what the worker
 * lets the WAL reach, should the worker fall behind or stop.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints; a PASSIVE checkpoint with nothing to copy costs a lock look-up. */
export const CHECKPOINT_INTERVAL_MS = 100;
/** The main connection's own automatic checkpoint, in WAL pages (SQLite's default is 1,000). */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;

// Plain CommonJS evaluated in the worker: no loader of the main thread (tsx, vitest) reaches a worker
// started from source, and this keeps the worker independent of how the service was built.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
let stopped = false;
const checkpoint = () => {
  if (stopped) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failing: the next tick tries again, and the main connection's backstop still holds.
  }
  setTimeout(checkpoint, workerData.intervalMs);
};
parentPort.on('message', () => {
  stopped = true;
  db.close();
  parentPort.close();
});
checkpoint();
`;

export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  /**
   * Starts the worker on `file`, an existing database in WAL mode. Nothing waits for it: until it
   * runs, and if it never does, the main connection's backstop checkpoint keeps the WAL bounded.
   */
  constructor(file: string, intervalMs = CHECKPOINT_INTERVAL_MS) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs } });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('error', () => undefined);
    // The service's life is not the worker's to extend.
    this.worker.unref();
  }

  /** Closes the worker's connection and ends the worker. */
  async stop(): Promise<void> {
    // Held while it ends: with nothing else to do (a warm-up's throwaway store, closed before the
    // service listens), an unreferenced worker's exit would let the process end first, silently.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
