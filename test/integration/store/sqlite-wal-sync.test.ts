/**
 * The write group's fsync off the main thread (src/store/sqlite-wal-sync.ts), on real files: a writer
 * is answered only after the WAL file itself is synced, syncs coalesce, the connection's other
 * writes keep SQLite's own fsync, and a failed sync stops the store instead of promising more.
 * Then the WAL checkpoints on a worker thread (src/store/sqlite-checkpointer.ts).
 */
import { fdatasync, mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../src/store/port.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite-store.js';
import type { SyncFile } from '../../../src/store/sqlite-wal-sync.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'conclave-wal-sync-'));
let files = 0;
const newFile = () => join(dir, `store-${++files}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sync the test releases by hand; each call records the file it was asked to sync. */
function heldSyncs() {
  const calls: { path: string; done: (error: NodeJS.ErrnoException | null) => void }[] = [];
  let holding = true;
  const syncFile: SyncFile = (fd, done) => {
    calls.push({ path: readlinkSync(`/proc/self/fd/${fd}`), done });
    if (!holding) fdatasync(fd, done);
  };
  return {
    syncFile,
    calls,
    /** Reports the held sync at `index` done (the test's files need no real sync). */
    release(index: number) {
      calls[index]!.done(null);
    },
    /** Stops holding: a sync asked for from now on happens at once (to close the store). */
    letGo() {
      holding = false;
    },
  };
}

/** A store on a new file whose WAL syncs the test holds; `close` lets them go first. */
function heldStore(file = newFile()) {
  const syncs = heldSyncs();
  const store = openSqliteStore({ file, syncFile: syncs.syncFile });
  return {
    syncs,
    store,
    async close() {
      syncs.letGo();
      await store.close();
    },
  };
}

/** Lets the group commit's setImmediate flush and any settled promise callbacks run. */
async function turns(n = 3): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

function settledFlag(promise: Promise<unknown>): { settled: boolean } {
  const flag = { settled: false };
  promise.then(
    () => (flag.settled = true),
    () => (flag.settled = true),
  );
  return flag;
}

/** The store's connection, to read its settings (a test-only look inside). */
const connectionOf = (store: SqliteStore) => (store as unknown as { db: Database.Database }).db;

describe('the write group fsync, off the main thread', () => {
  it('answers a write only after the WAL file itself has been synced', async () => {
    const file = newFile();
    const { syncs, store, close } = heldStore(file);
    const write = store.setMeta('k', 'v');
    const flag = settledFlag(write);
    await turns();
    expect(syncs.calls.map((c) => c.path)).toEqual([`${file}-wal`]);
    expect(flag.settled).toBe(false);
    syncs.release(0);
    await write;
    expect(await store.meta('k')).toBe('v');
    await close();
  });

  it('covers the groups written while one sync runs with the next one', async () => {
    const { syncs, store, close } = heldStore();
    const first = store.setMeta('a', '1');
    await turns();
    // Two more groups, in two later turns, while the first sync is still under way.
    const second = store.setMeta('b', '2');
    await turns();
    const third = store.setMeta('c', '3');
    await turns();
    expect(syncs.calls).toHaveLength(1);
    syncs.release(0);
    await first;
    await turns();
    expect(syncs.calls).toHaveLength(2);
    const later = [settledFlag(second), settledFlag(third)];
    await turns();
    expect(later.map((f) => f.settled)).toEqual([false, false]);
    syncs.release(1);
    await Promise.all([second, third]);
    expect(store.commitStats.groups).toBeGreaterThanOrEqual(3);
    await close();
  });

  it('skips SQLite’s own fsync for the group only: the connection stays at FULL for its other writes', async () => {
    const { syncs, store, close } = heldStore();
    const write = store.setMeta('k', 'v');
    await turns();
    // 2 is FULL: lock taking, wake consumption and deletions commit with SQLite's own fsync.
    expect(connectionOf(store).pragma('synchronous', { simple: true })).toBe(2);
    syncs.release(0);
    await write;
    await close();
  });

  it('stops the store when a sync fails: the waiting writes and every later call are refused', async () => {
    const { syncs, store } = heldStore();
    const write = store.setMeta('k', 'v');
    await turns();
    syncs.calls[0]!.done(Object.assign(new Error('I/O error'), { code: 'EIO' }));
    await expect(write).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(write).rejects.toThrow(/could not sync its writes to disk/);
    await expect(store.setMeta('k2', 'v')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.meta('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    await store.close();
  });

  it('makes what it closes with durable: close waits for the sync under way', async () => {
    const file = newFile();
    const { syncs, store } = heldStore(file);
    const write = store.setMeta('k', 'v');
    const closing = store.close();
    const closed = settledFlag(closing);
    await turns();
    expect(closed.settled).toBe(false);
    // Released one by one as they come: the group's sync, then close's own.
    while (!closed.settled) {
      for (const call of syncs.calls.splice(0)) call.done(null);
      await turns();
    }
    await write;
    const reopened = openSqliteStore({ file, syncFile: fdatasync });
    expect(await reopened.meta('k')).toBe('v');
    await reopened.close();
  });
});

describe('WAL checkpoints, on a worker thread', () => {
  it('copies the WAL into the database file long before the main connection’s backstop would', async () => {
    const file = newFile();
    const store = openSqliteStore({ file });
    expect(connectionOf(store).pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
    const before = statSync(file).size;
    // About 1.5 MB of WAL: far under the backstop (10,000 pages, 40 MB), over SQLite's own 1,000 pages.
    for (let i = 0; i < 40; i++) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => store.setMeta(`k${i}-${j}`, 'x'.repeat(3500))));
    }
    // Only a checkpoint writes pages into the database file itself; the worker runs one every 100 ms.
    const deadline = Date.now() + 10_000;
    while (statSync(file).size < before + 1_000_000 && Date.now() < deadline) await sleep(50);
    expect(statSync(file).size).toBeGreaterThan(before + 1_000_000);
    await store.close();
    const reopened = openSqliteStore({ file });
    expect(await reopened.meta('k39-9')).toBe('x'.repeat(3500));
    await reopened.close();
  });

  it('lets a process that has nothing else to do close its store and go on', async () => {
    // The service's warm-up closes a throwaway store before it listens: nothing else holds the event
    // loop then, and waiting on the unreferenced worker's exit once let the process end silently.
    const child = `
      const { openSqliteStore } = await import(process.env.STORE_MODULE);
      const store = openSqliteStore({ file: process.env.STORE_FILE });
      await store.setMeta('k', 'v');
      await store.close();
      console.log('after close');
    `;
    const output = await new Promise<string>((resolve, reject) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
        cwd: repoRoot,
        env: { ...process.env, STORE_MODULE: join(repoRoot, 'src/store/sqlite-store.ts'), STORE_FILE: newFile() },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      proc.once('error', reject);
      proc.once('exit', () => resolve(out));
    });
    expect(output.trim()).toBe('after close');
  });
});
