/**
 * `conclave verify` against the transparency log and `conclave log` / `conclave log audit`, as child
 * processes against a real service: a genuine room passes and the next run proves the new checkpoint
 * consistent with the remembered one; a rollback and a fork of the remembered checkpoint fail; a
 * receipt rewritten in the room store behind the service's back fails naming its leaf; an entry
 * rewritten in the log, or the log truncated, fails the audit naming the leaf.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { toBase64 } from '../../src/tlog/note.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';
import { type Run, runCliWithin } from './run-cli.js';

describe('conclave verify and conclave log against the transparency log', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let rooms: { slug: string; token: string }[];

  const cli = (...args: string[]): Promise<Run> => runCliWithin(60_000, env, ...args);
  const verify = (room: { slug: string; token: string }, ...extra: string[]) =>
    cli('verify', `${svc.base}/r/${room.slug}`, '--token', room.token, '--log-wait', '1', ...extra);
  const remembered = () => path.join(dir, 'config', 'checkpoints.json');
  const db = () => new Database(path.join(svc.dataDir, 'conclave.db'));

  beforeAll(async () => {
    svc = await startService({ clock });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-cli-log-'));
    env = { ...process.env, CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'), CONCLAVE_URL: svc.base };
    rooms = [await roomWithReceipts(svc.base, clock), await roomWithReceipts(svc.base, clock, true)];
    await svc.service.integrator.integrateNow();
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('verifies every receipt of a room as a leaf, and remembers the checkpoint', async () => {
    const first = await verify(rooms[1]!);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('✓ log: checkpoint 3 is the first seen');
    expect(first.stdout).toContain('decisions[0]: leaf 1 of checkpoint 3');
    expect(first.stdout).toContain('conclusion: leaf 2 of checkpoint 3');
    await roomWithReceipts(svc.base, clock);
    await svc.service.integrator.integrateNow();
    const second = await verify(rooms[0]!);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('checkpoint 4 is consistent with checkpoint 3');
  });

  it('fails on a rollback and on a fork of the checkpoint it remembers', async () => {
    const file = remembered();
    const saved = JSON.parse(await readFile(file, 'utf8'));
    const origin = Object.keys(saved)[0] as string;
    const genuine = saved[origin];
    await writeFile(file, JSON.stringify({ [origin]: { ...genuine, size: genuine.size + 5 } }));
    const rollback = await verify(rooms[0]!);
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toMatch(/rollback: the log now shows 4 leaves, but checkpoint 9 was seen/);
    await writeFile(file, JSON.stringify({ [origin]: { ...genuine, size: 2, root: toBase64(new Uint8Array(32)) } }));
    const fork = await verify(rooms[0]!);
    expect(fork.code).toBe(1);
    expect(fork.stderr).toMatch(/fork: checkpoint 4 is not consistent with checkpoint 2/);
    await writeFile(file, JSON.stringify({ [origin]: { ...genuine, root: toBase64(new Uint8Array(32)) } }));
    const same = await verify(rooms[0]!);
    expect(same.stderr).toMatch(/fork: two different checkpoints of size 4/);
    await writeFile(file, JSON.stringify({ [origin]: genuine }));
  });

  it('audits a mirror of the log', async () => {
    const mirror = path.join(dir, 'mirror-ok');
    const mirrored = await cli('log', '--dir', mirror);
    expect(mirrored.stderr).toBe('');
    expect(mirrored.code).toBe(0);
    expect(mirrored.stdout).toContain('mirrored 4 leaves');
    const audit = await cli('log', 'audit', '--dir', mirror);
    expect(audit.stderr).toBe('');
    expect(audit.stdout).toMatch(/4 leaves recomputed from their entries; [1-9]\d* checkpoints match their roots/);
  });

  it('names the leaf of a receipt rewritten in the room store behind the service’s back', async () => {
    const room = rooms[1]!;
    const outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
    const jws = outcome.decisions[0].receipt_jws as string;
    const forged = `${jws.slice(0, -2)}${jws.endsWith('AA') ? 'AB' : 'AA'}`;
    const handle = db();
    handle.prepare('UPDATE receipts SET jws = ? WHERE slug = ? AND sequence = 1').run(forged, room.slug);
    handle.close();
    const run = await verify(room);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('log: decisions[0]: the log holds a different receipt at leaf 1 of checkpoint 4');
  });

  it('names the leaf when a log entry is rewritten or the log truncated', async () => {
    const handle = db();
    const original = handle.prepare('SELECT leaf FROM tlog_v2_entries WHERE idx = 1').get() as { leaf: string };
    handle.prepare('UPDATE tlog_v2_entries SET leaf = ? WHERE idx = 1').run(`${original.leaf}x`);
    const rewritten = await cli('log', 'audit', '--dir', path.join(dir, 'mirror-rewritten'));
    expect(rewritten.code).toBe(1);
    expect(rewritten.stderr).toContain('leaf 1: its entry does not hash to the leaf hash');
    handle.prepare('UPDATE tlog_v2_entries SET leaf = ? WHERE idx = 1').run(original.leaf);
    handle.prepare('DELETE FROM tlog_v2_entries WHERE idx >= 2').run();
    handle.close();
    const truncated = await cli('log', 'audit', '--dir', path.join(dir, 'mirror-truncated'));
    expect(truncated.code).toBe(1);
    expect(truncated.stderr).toContain('leaf 2: missing from the log');
  });
});
