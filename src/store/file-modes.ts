/**
 * The SQLite files are readable by the service account only (docs/architecture.md, Credentials):
 * they hold token hashes, password hashes and sealed idempotency records, and a world-readable
 * file gives any local user an offline copy to work on.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { configProblem } from '../config.js';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/** SQLite's companions of a database file in WAL mode. */
const COMPANIONS = ['', '-wal', '-shm', '-journal'];

/**
 * Creates the database file 0600 before SQLite opens it (SQLite gives the WAL and shared-memory
 * files the mode of the database file) and tightens the files an earlier version left readable.
 * `:memory:` and other non-file names are left alone.
 */
export function secureDatabaseFiles(file: string): void {
  if (file === '' || file.startsWith(':') || file.startsWith('file:')) return;
  if (!existsSync(file)) closeSync(openSync(file, 'a', FILE_MODE));
  for (const suffix of COMPANIONS) {
    if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, FILE_MODE);
  }
}

/**
 * Creates the data directory 0700, and tightens an existing one the service owns. A directory owned
 * by someone else (a mount point) cannot be changed by the service and is left as it is; the files
 * inside are still 0600.
 */
export function secureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (error) {
    throw configProblem('DATA_DIR', dir, dataDirProblem((error as NodeJS.ErrnoException).code));
  }
  try {
    chmodSync(path.resolve(dir), DIR_MODE);
  } catch {
    // EPERM: not ours to change.
  }
}

/** The data directory's failure in an operator's words: mkdir's bare EEXIST says nothing of which path. */
function dataDirProblem(code: string | undefined): string {
  switch (code) {
    case 'EEXIST':
    case 'ENOTDIR':
      return 'is a file (or lies under one), not a directory: point DATA_DIR at a directory';
    case 'EACCES':
    case 'EPERM':
      return "cannot be created: the service's user may not write there";
    case 'EROFS':
      return 'is on a read-only file system';
    default:
      return `cannot be created (${code ?? 'unknown error'})`;
  }
}
