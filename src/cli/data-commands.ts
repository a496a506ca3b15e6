/**
 * `conclave backup|restore`: the embedded store's data directory, copied while the service runs and
 * brought back into a data directory (docs/operations-backup.md). They read DATA_DIR like the
 * service (or --data-dir) and print what they copied; refusals exit 6.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { EXIT, Exit, jsonOutput, print } from './shell.js';

export function registerDataCommands(program: Command): void {
  program
    .command('backup <file>')
    .description("copy the embedded store (DATA_DIR's conclave.db and keys) to one file while the service runs")
    .option('--data-dir <dir>', 'the data directory (default: DATA_DIR)')
    .option('--force', 'replace <file> if it exists')
    .action(async (file: string, options: { dataDir?: string; force?: boolean }, command: Command) => {
      const dataDir = await dataDirOf(options.dataDir, 'backup');
      const { backupDataDir } = await import('../store/backup.js');
      const summary = await refusalsExit(() =>
        backupDataDir({ dataDir, file: path.resolve(file), force: options.force === true }),
      );
      print(
        jsonOutput(command),
        summary,
        `✓ backed up ${dataDir}: ${summary.rooms} room(s), ${summary.receipts} receipt(s), ${summary.keys} signing key(s) → ${summary.file} (${summary.bytes} bytes, mode 0600)`,
      );
    });

  program
    .command('restore <file>')
    .description('bring a backup back into an empty data directory (DATA_DIR or --data-dir); then start the service')
    .option('--data-dir <dir>', 'the data directory (default: DATA_DIR)')
    .option('--force', "replace the directory's store and keys (stop the service first)")
    .action(async (file: string, options: { dataDir?: string; force?: boolean }, command: Command) => {
      const dataDir = await dataDirOf(options.dataDir, 'restore');
      const { restoreDataDir } = await import('../store/backup.js');
      const summary = await refusalsExit(() =>
        restoreDataDir({ file: path.resolve(file), dataDir, force: options.force === true }),
      );
      print(
        jsonOutput(command),
        summary,
        `✓ restored ${summary.rooms} room(s), ${summary.receipts} receipt(s), ${summary.keys} signing key(s) from the backup of ${summary.createdAt} into ${dataDir}`,
      );
    });
}

/** --data-dir, else DATA_DIR as the service reads it; a Redis-backed service has no embedded store. */
export async function dataDirOf(flag: string | undefined, verb: string): Promise<string> {
  if (flag) return path.resolve(flag);
  const { loadConfig } = await import('../config.js');
  const config = loadConfig();
  if (config.store.kind === 'redis' && verb === 'backup')
    throw new Exit(
      EXIT.local,
      'STORE=redis: this service keeps its rooms in Redis; back them up with Redis persistence (docs/operations-backup.md), or pass --data-dir for an embedded store',
    );
  return config.dataDir;
}

async function refusalsExit<T>(work: () => Promise<T>): Promise<T> {
  const { BackupRefused } = await import('../store/backup.js');
  try {
    return await work();
  } catch (error) {
    if (error instanceof BackupRefused) throw new Exit(EXIT.local, error.message);
    throw error;
  }
}
