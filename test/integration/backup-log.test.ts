/**
 * `conclave backup` and `conclave restore` carry the transparency log (docs/operations-backup.md): a
 * backup taken while the service runs, restored into a new data directory and served at the same
 * URL, serves every checkpoint published before byte for byte, sequences the receipts that were
 * still queued (the dead process's log lease is dropped on restore, as room locks are), and extends
 * the same tree: every earlier checkpoint is consistent with the next one, and `conclave verify`
 * proves the checkpoint it remembered consistent across the restore.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyCheckpoint, verifyConsistency } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { runCliWithin } from '../cli/run-cli.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';

/** integrateNow may join a pass begun before the last commit: a second pass, begun after it, follows. */
async function settle(svc: RunningService): Promise<void> {
  await svc.service.integrator.integrateNow();
  await svc.service.integrator.integrateNow();
}

describe('conclave backup and restore keep the transparency log', () => {
  const clock = new ManualClock();
  const running: RunningService[] = [];
  let dir: string;
  afterAll(async () => {
    for (const svc of running) await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a restored store serves the same checkpoints and extends the same tree', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-backup-log-'));
    const env = { ...process.env, LOG_LEVEL: 'silent', CONCLAVE_CONFIG: path.join(dir, 'cli', 'config.json') };
    const cli = (...args: string[]) => runCliWithin(60_000, env, ...args);
    const dataDir = path.join(dir, 'data');
    const original = await startService({ clock, dataDir });
    running.push(original);
    const port = Number(new URL(original.base).port);
    const rooms = [await roomWithReceipts(original.base, clock, true)];
    await settle(original);
    rooms.push(await roomWithReceipts(original.base, clock));
    await settle(original);
    const remembered = await cli('verify', `${original.base}/r/${rooms[0]!.slug}`, '--token', rooms[0]!.token);
    expect(remembered.code, remembered.stderr).toBe(0);
    expect(remembered.stdout).toContain('checkpoint 3 is the first seen');
    const published = new Map<number, string>();
    for (const size of (await call(original.base, 'GET', '/log/checkpoints')).body.sizes as number[])
      published.set(size, (await call(original.base, 'GET', `/log/checkpoint/${size}`)).text);

    // A receipt committed but not yet sequenced when the backup is taken (the integrator is held off
    // by a lease its process will never give back).
    await original.service.integrator.stop();
    const db = new Database(path.join(dataDir, 'conclave.db'));
    db.prepare("INSERT INTO locks (slug, token, expires_at) VALUES ('~log', 'dead-process', ?)").run(
      Date.now() + 3_600_000,
    );
    db.close();
    rooms.push(await roomWithReceipts(original.base, clock));
    const file = path.join(dir, 'conclave.backup');
    const backup = await cli('backup', file, '--data-dir', dataDir);
    expect(backup.code, backup.stderr).toBe(0);
    await original.stop();
    running.length = 0;

    const restoredDir = path.join(dir, 'restored');
    const restore = await cli('restore', file, '--data-dir', restoredDir);
    expect(restore.code, restore.stderr).toBe(0);
    const restored = await startService({ clock, dataDir: restoredDir, port });
    running.push(restored);
    for (const [size, note] of published) {
      expect((await call(restored.base, 'GET', `/log/checkpoint/${size}`)).text, `checkpoint ${size}`).toBe(note);
    }
    await settle(restored);
    const verifierKey = (await call(restored.base, 'GET', '/.well-known/svc.json')).body.audit_log.verifier_key;
    const latest = await verifyCheckpoint((await call(restored.base, 'GET', '/log/checkpoint')).text, verifierKey);
    expect(latest.size).toBe(4);
    for (const [size, note] of published) {
      if (size === 0) continue;
      const proof = await call(restored.base, 'GET', `/log/proof/consistency?first=${size}&second=4`);
      expect(verifyConsistency(await verifyCheckpoint(note, verifierKey), latest, proof.body.consistency_proof)).toBe(
        true,
      );
    }
    const after = await cli('verify', `${restored.base}/r/${rooms[0]!.slug}`, '--token', rooms[0]!.token);
    expect(after.stderr).toBe('');
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('checkpoint 4 is consistent with checkpoint 3');
    const queued = await cli('verify', `${restored.base}/r/${rooms[2]!.slug}`, '--token', rooms[2]!.token);
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stdout).toContain('leaf 3 of checkpoint 4');
  }, 120_000);
});
