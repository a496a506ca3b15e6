import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/index.js';
import { type CommitBatch, StoreConflictError, StoreUnavailableError } from '../../../src/store/port.js';
import { openSqliteStore } from '../../../src/store/sqlite-store.js';
import { event, storeContract } from './contract.js';
import { engagementContract } from './engagement-contract.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'conclave-sqlite-'));
let files = 0;
const newFile = () => join(dir, `store-${++files}.db`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteStore', () => {
  const target = {
    async fresh() {
      const file = newFile();
      return { open: async (clock?: () => number) => openSqliteStore({ file, ...(clock ? { clock } : {}) }) };
    },
  };
  storeContract(target);
  engagementContract(target);

  describe('group commit', () => {
    const creation = (slug: string): CommitBatch => ({
      slug,
      expected_version: 0,
      snapshot: `{"room":"${slug}"}`,
      events: [event(1)],
      receipts: [],
      next_deadline: null,
    });

    it('writes the commits handed in during one tick in one transaction, each answered after it', async () => {
      const file = newFile();
      const store = openSqliteStore({ file });
      const before = { ...store.commitStats };
      const records = await Promise.all(Array.from({ length: 40 }, (_, i) => store.commit(creation(`g${i}`))));
      expect(records.map((r) => r.version)).toEqual(Array(40).fill(1));
      expect(store.commitStats.groups - before.groups).toBe(1);
      expect(store.commitStats.batches - before.batches).toBe(40);
      // A commit in a later tick is a later group.
      await store.commit({ ...creation('g0'), expected_version: 1, events: [event(2)] });
      expect(store.commitStats.groups - before.groups).toBe(2);
      await store.close();
      const reopened = openSqliteStore({ file });
      for (let i = 0; i < 40; i++) expect((await reopened.load(`g${i}`))?.head).toBe(i === 0 ? 2 : 1);
      await reopened.close();
    });

    it('fails a conflicting batch alone; the rest of its group commits', async () => {
      const store = openSqliteStore({ file: newFile() });
      await store.commit(creation('taken'));
      const outcomes = await Promise.allSettled([
        store.commit(creation('a')),
        store.commit(creation('taken')),
        store.commit({ ...creation('b'), events: [event(2)] }),
        store.commit(creation('c')),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(StoreConflictError);
      expect(await store.load('b')).toBeNull();
      expect((await store.events('a', 0, 10)).map((e) => e.seq)).toEqual([1]);
      expect((await store.events('taken', 0, 10)).map((e) => e.seq)).toEqual([1]);
      await store.close();
    });

    it('writes commits already handed in when the store closes, and refuses new ones after', async () => {
      const file = newFile();
      const store = openSqliteStore({ file });
      const pending = store.commit(creation('late'));
      await store.close();
      expect((await pending).version).toBe(1);
      await expect(store.commit(creation('later'))).rejects.toBeInstanceOf(StoreUnavailableError);
      const reopened = openSqliteStore({ file });
      expect(await reopened.load('late')).not.toBeNull();
      await reopened.close();
    });
  });

  it('runs in memory', async () => {
    const store = openSqliteStore({ file: ':memory:' });
    await store.commit({
      slug: 'mem',
      expected_version: 0,
      snapshot: '{}',
      events: [],
      receipts: [],
      next_deadline: 5,
    });
    expect(await store.nextDeadline()).toBe(5);
    await store.close();
  });

  it('opens through openStore', async () => {
    const store = await openStore({ kind: 'sqlite', file: newFile() });
    expect(store.kind).toBe('sqlite');
    await store.ping();
    await store.close();
  });

  it('migrates once, however many connections open the file', async () => {
    const file = newFile();
    const stores = [openSqliteStore({ file }), openSqliteStore({ file }), openSqliteStore({ file })];
    await Promise.all(stores.map((s) => s.close()));
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
      { version: 8 },
      { version: 9 },
    ]);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('fails with StoreUnavailableError when the file cannot be opened', () => {
    expect(() => openSqliteStore({ file: join(dir, 'missing-dir', 'x.db') })).toThrow(StoreUnavailableError);
  });

  it('keeps an acknowledged commit when the process is killed right after it', async () => {
    const file = newFile();
    const events = [event(1), event(2), event(3)];
    const child = `
      const { openSqliteStore } = await import(process.env.STORE_MODULE);
      const store = openSqliteStore({ file: process.env.STORE_FILE });
      const events = JSON.parse(process.env.STORE_EVENTS);
      await store.commit({ slug: 'durable', expected_version: 0, snapshot: 'v1', events: events.slice(0, 1),
        receipts: [], next_deadline: null });
      await store.commit({ slug: 'durable', expected_version: 1, snapshot: 'v2', events: events.slice(1),
        receipts: [], next_deadline: 7 });
      process.kill(process.pid, 'SIGKILL');
    `;
    const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
        cwd: repoRoot,
        env: {
          ...process.env,
          STORE_MODULE: join(repoRoot, 'src/store/sqlite-store.ts'),
          STORE_FILE: file,
          STORE_EVENTS: JSON.stringify(events),
        },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      proc.once('error', reject);
      proc.once('exit', (_code, sig) => resolve(sig));
    });
    expect(signal).toBe('SIGKILL');

    const store = openSqliteStore({ file });
    expect(await store.load('durable')).toEqual({
      slug: 'durable',
      version: 2,
      head: 3,
      snapshot: 'v2',
      next_deadline: 7,
    });
    expect(await store.events('durable', 0, 10)).toEqual(events);
    await store.close();
  });
});
