/**
 * `conclave backup|restore`: the embedded store's data directory, copied while the service runs and
 * brought back into a data directory (docs/operations-backup.md). They read DATA_DIR like the
 * service (or --data-dir) and print what they copied; refusals exit 6.
 */
import path from 'node:path';
import { existsSync } from 'node:fs';
import { type Command, Option } from 'commander';
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

  program
    .command('migrate')
    .description(
      'copy every room of an embedded store (DATA_DIR) into Redis: idempotent and resumable; a room already there with other content is reported, never overwritten (exit 6). Stop the service first.',
    )
    .requiredOption('--to <store>', 'the target store: redis')
    .addOption(
      new Option('--redis-url <url>', 'the Redis to copy into (one node, or Cluster nodes comma-separated)').env(
        'REDIS_URL',
      ),
    )
    .option('--redis-cluster', 'a Redis Cluster even when --redis-url names one node')
    .addOption(
      new Option('--redis-key-prefix <prefix>', 'as the service will use it')
        .env('REDIS_KEY_PREFIX')
        .default('conclave:'),
    )
    .option('--data-dir <dir>', 'the SQLite data directory (default: DATA_DIR)')
    .action(
      async (
        options: { to: string; redisUrl?: string; redisCluster?: boolean; redisKeyPrefix: string; dataDir?: string },
        command: Command,
      ) => {
        if (options.to !== 'redis') throw new Exit(EXIT.usage, `--to ${options.to}: the only target is redis`);
        if (!options.redisUrl)
          throw new Exit(EXIT.usage, 'name the Redis: --redis-url redis://host:6379 (or REDIS_URL)');
        const dataDir = options.dataDir
          ? path.resolve(options.dataDir)
          : (await import('../config.js')).loadConfig().dataDir;
        if (!existsSync(path.join(dataDir, 'conclave.db')))
          throw new Exit(EXIT.local, `no embedded store at ${path.join(dataDir, 'conclave.db')}: pass --data-dir`);
        const { migrateToRedis, LogTransferRefused } = await import('../store/migrate-to-redis.js');
        const json = jsonOutput(command);
        const report = await migrateToRedis({
          dataDir,
          redis: {
            url: options.redisUrl,
            cluster: options.redisCluster === true,
            keyPrefix: options.redisKeyPrefix,
            commandTimeoutMs: 10_000,
          },
          ...(json
            ? {}
            : {
                onRoom: (slug: string, result: string) =>
                  result !== 'unchanged' && console.error(`  ${slug}: ${result}`),
              }),
        }).catch((error: unknown) => {
          // Another log in Redis, or a service holding its lease: refused before anything was written.
          if (error instanceof LogTransferRefused) throw new Exit(EXIT.local, error.message);
          throw error;
        });
        const { created, unchanged, conflict, reserved } = report.rooms;
        const lines = [
          `${conflict === 0 ? '✓' : '✗'} ${dataDir} → Redis: ${created} room(s) copied, ${unchanged} already there unchanged, ${reserved} deleted slug(s) reserved, ${report.webhooks} webhook(s), ${report.links} credential link(s)`,
          logLine(report.log),
          ...frozenLogLine(report.frozenLog),
          ...report.conflicts.map((c) => `✗ ${c.slug}: ${c.reason} — left as it is in Redis`),
          `  The signing keys stay in ${path.join(dataDir, 'keys')}: start the Redis-backed service with this DATA_DIR (or a copy of keys/).`,
        ];
        print(json, report, lines.join('\n'));
        if (conflict > 0 || report.conflicts.length > 0)
          throw new Exit(EXIT.local, `${report.conflicts.length} conflict(s): nothing was overwritten`);
      },
    );
}

function logLine(log: {
  result: string;
  leaves: number;
  checkpoints: number;
  cosignatures: number;
  queued: number;
}): string {
  if (log.result === 'none')
    return '  No transparency log here yet: the Redis service logs the receipts when it starts.';
  if (log.result === 'unchanged') return '✓ transparency log: already in Redis, unchanged';
  return `✓ transparency log: ${log.leaves} leaves, ${log.checkpoints} checkpoint(s) (${log.cosignatures} cosignature(s)), ${log.queued} receipt(s) queued — as they were`;
}

/** The frozen v1 log (from before the commitment log): a line only where the store has one. */
function frozenLogLine(log: { result: string; leaves: number; checkpoints: number; cosignatures: number }): string[] {
  if (log.result === 'none') return [];
  if (log.result === 'unchanged') return ['✓ frozen v1 transparency log: already in Redis, unchanged'];
  return [
    `✓ frozen v1 transparency log: ${log.leaves} leaves, ${log.checkpoints} checkpoint(s) (${log.cosignatures} cosignature(s)) — as they were`,
  ];
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
