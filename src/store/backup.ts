/**
 * Backup and restore of the embedded store (docs/operations-backup.md). A backup is one SQLite file:
 * a consistent copy of `conclave.db` taken with SQLite's online backup API while the service keeps
 * running, plus the signing keys of `keys/` (without them a restored service would sign with a new
 * key and publish a JWKS that no longer verifies the old receipts).
 *
 * Nothing is decrypted or re-encoded on the way: sealed idempotency bodies stay sealed, hashes stay
 * hashes, and the file is 0600 like the store it copies. What is in the clear in the live store (the
 * webhook signing secrets, the generated keys' private seeds) is in the clear in the backup too:
 * keep it where you keep the data directory.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { KeyStore, type StoredKeyRecord } from '../receipts/key-store.js';
import { secureDataDir } from './file-modes.js';

export const DATABASE_FILE = 'conclave.db';
const FORMAT = 'conclave-backup';
const FORMAT_VERSION = 1;
/** SQLite's companions of a database file in WAL mode. */
const COMPANIONS = ['', '-wal', '-shm', '-journal'];

export interface BackupSummary {
  file: string;
  rooms: number;
  receipts: number;
  keys: number;
  bytes: number;
}

/** A backup or restore that cannot proceed as asked; the message says why and what to do. */
export class BackupRefused extends Error {}

/**
 * Copies the store of `dataDir` to `file` while the service may be writing. The copy is one read
 * transaction's view: every commit acknowledged before the backup started is in it. Written beside
 * the target and renamed, so `file` is either absent or a complete, checked backup.
 */
export async function backupDataDir(options: {
  dataDir: string;
  file: string;
  force?: boolean;
}): Promise<BackupSummary> {
  const source = path.join(options.dataDir, DATABASE_FILE);
  if (!existsSync(source))
    throw new BackupRefused(`no embedded store at ${source}: is DATA_DIR right, and has the service run there?`);
  if (existsSync(options.file) && !options.force)
    throw new BackupRefused(`${options.file} exists: choose another name, or pass --force to replace it`);
  const partial = `${options.file}.${randomBytes(6).toString('hex')}.partial`;
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    const live = new Database(source, { fileMustExist: true });
    try {
      live.pragma('busy_timeout = 5000');
      // After the first step, copy the rest in one step: a backup restarted by a concurrent write
      // then still finishes, from one consistent read transaction, instead of restarting forever.
      await live.backup(partial, { progress: ({ totalPages }) => Math.max(totalPages, 100) });
    } finally {
      live.close();
    }
    // Keys are read after the data: keys only accumulate, so every receipt in the copy has its key.
    const keys = await new KeyStore(options.dataDir).readExisting();
    const summary = annotate(partial, keys);
    syncFile(partial);
    renameSync(partial, options.file);
    chmodSync(options.file, 0o600);
    syncFile(path.dirname(path.resolve(options.file)));
    return { ...summary, file: options.file };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/** Records the keys and the format in the copy, checks it, and makes it one self-contained file. */
function annotate(file: string, keys: StoredKeyRecord[]): Omit<BackupSummary, 'file'> {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.exec(`
      CREATE TABLE conclave_backup (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE conclave_backup_keys (kid TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
    `);
    const meta = db.prepare('INSERT INTO conclave_backup (key, value) VALUES (?, ?)');
    const key = db.prepare('INSERT INTO conclave_backup_keys (kid, record) VALUES (?, ?)');
    db.transaction(() => {
      meta.run('format', FORMAT);
      meta.run('version', String(FORMAT_VERSION));
      meta.run('created_at', new Date().toISOString());
      for (const record of keys) key.run(record.kid, JSON.stringify(record));
    })();
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the backup copy failed its integrity check: ${String(check)}`);
    return {
      rooms: count(db, 'rooms'),
      receipts: count(db, 'receipts'),
      keys: keys.length,
      bytes:
        (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number),
    };
  } finally {
    db.close();
  }
}

export interface RestoreSummary {
  dataDir: string;
  rooms: number;
  receipts: number;
  keys: number;
  createdAt: string;
}

/**
 * Brings a backup back as the store and keys of `dataDir`. Refuses a data directory that holds
 * anything unless `force` (then the store's files and `keys/` are replaced; stop the service first).
 */
export async function restoreDataDir(options: {
  file: string;
  dataDir: string;
  force?: boolean;
}): Promise<RestoreSummary> {
  const { keys, createdAt } = readBackup(options.file);
  const present = existsSync(options.dataDir) ? readdirSync(options.dataDir) : [];
  if (present.length > 0 && !options.force)
    throw new BackupRefused(
      `${options.dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}): restore into an empty directory, or stop the service and pass --force to replace its store and keys`,
    );
  secureDataDir(options.dataDir);
  const target = path.join(options.dataDir, DATABASE_FILE);
  const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await copyFile(options.file, partial);
    chmodSync(partial, 0o600);
    const db = new Database(partial);
    let summary: { rooms: number; receipts: number };
    try {
      // Locks held by the service at backup time belong to processes that are not coming back.
      db.exec('DROP TABLE conclave_backup; DROP TABLE conclave_backup_keys; DELETE FROM locks;');
      summary = { rooms: count(db, 'rooms'), receipts: count(db, 'receipts') };
    } finally {
      db.close();
    }
    syncFile(partial);
    if (options.force) {
      for (const suffix of COMPANIONS) rmSync(`${target}${suffix}`, { force: true });
      rmSync(path.join(options.dataDir, 'keys'), { recursive: true, force: true });
    }
    renameSync(partial, target);
    const store = new KeyStore(options.dataDir);
    for (const record of keys) await store.write(record);
    syncFile(options.dataDir);
    return { dataDir: options.dataDir, ...summary, keys: keys.length, createdAt };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

function readBackup(file: string): { keys: StoredKeyRecord[]; createdAt: string } {
  if (!existsSync(file)) throw new BackupRefused(`${file} does not exist`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupRefused(`${file} is not a conclave backup (${(error as Error).message})`);
  }
  try {
    const meta = new Map(
      db
        .prepare<[], { key: string; value: string }>('SELECT key, value FROM conclave_backup')
        .all()
        .map((row) => [row.key, row.value]),
    );
    if (meta.get('format') !== FORMAT) throw new Error('no backup format recorded');
    if (Number(meta.get('version')) > FORMAT_VERSION)
      throw new BackupRefused(`${file} was written by a newer conclave (backup format ${meta.get('version')})`);
    const keys = db
      .prepare<[], { record: string }>('SELECT record FROM conclave_backup_keys ORDER BY kid')
      .all()
      .map((row) => JSON.parse(row.record) as StoredKeyRecord);
    return { keys, createdAt: meta.get('created_at') ?? '' };
  } catch (error) {
    if (error instanceof BackupRefused) throw error;
    throw new BackupRefused(`${file} is not a conclave backup (${(error as Error).message})`);
  } finally {
    db.close();
  }
}

function count(db: Database.Database, table: string): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
}

/** fsync a file or directory, so a rename that follows is durable. */
function syncFile(target: string): void {
  const fd = openSync(target, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
