/**
 * A committed SQLite fixture opened for reading without touching it: SQLite in WAL mode writes
 * -shm/-wal files beside any database it opens, even read-only, and a WAL database cannot be opened
 * from its bytes in memory. So the file is copied to a temporary folder first, opened there, and
 * the copy removed when the caller is done.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

export function withFixtureDb<T>(file: string, read: (db: Database.Database) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'conclave-fixture-'));
  const copy = path.join(dir, path.basename(file));
  copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
