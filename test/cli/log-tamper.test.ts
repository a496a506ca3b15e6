/**
 * The log tampered with behind the service's back, caught by both `conclave verify` and
 * `conclave log audit` (child processes against a real service), each exiting non-zero and naming
 * the leaf (docs/transparency-log.md, Verifying):
 *
 * - a receipt rewritten everywhere it is stored (the room's chain and the log's entry: the forged
 *   receipt's commitment leaf under the genuine label), as a forger who cannot change the published
 *   hashes would: verify finds the entry is not the signed tree's leaf, the audit finds the entry
 *   does not hash to it;
 * - the log truncated (entries, tiles, state and later checkpoints rolled back): verify finds the
 *   checkpoint it remembered is gone (a rollback), the audit finds a signed checkpoint in its
 *   mirror that covers leaves the log no longer has.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { fromBase64 } from '../../src/tlog/note.js';
import { receiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';
import { type Run, runCliWithin } from './run-cli.js';

describe('conclave verify and conclave log audit catch a log tampered with behind the service', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let dir: string;
  let room: { slug: string; token: string };

  const cli = (config: string, ...args: string[]): Promise<Run> =>
    runCliWithin(
      60_000,
      { ...process.env, CONCLAVE_CONFIG: path.join(dir, config, 'config.json'), CONCLAVE_URL: svc.base },
      ...args,
    );
  const verify = (config = 'reader') =>
    cli(config, 'verify', `${svc.base}/r/${room.slug}`, '--token', room.token, '--log-wait', '1');
  const audit = () => cli('reader', 'log', 'audit', '--dir', path.join(dir, 'mirror'));
  const db = () => new Database(path.join(svc.dataDir, 'conclave.db'));

  beforeAll(async () => {
    svc = await startService({ clock });
    // Only the integrateNow() calls below sequence: the integrator's own timer could publish a
    // checkpoint between this room's two receipts (seen on a loaded machine), and the truncation
    // below is named by the first mirrored checkpoint past leaf 0.
    await svc.service.integrator.stop();
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-cli-tamper-'));
    // Leaf 0: another room's receipt; leaves 1 and 2: this room's decision and conclusion.
    await roomWithReceipts(svc.base, clock);
    // Checkpoint 1 published now, not whenever the integrator's timer falls: the truncation below
    // rolls the log back to it.
    await svc.service.integrator.integrateNow();
    room = await roomWithReceipts(svc.base, clock, true);
    await svc.service.integrator.integrateNow();
    // A reader who verified the room and mirrored the log before anything was touched.
    const first = await verify();
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain('decisions[0]: leaf 1 of checkpoint 3');
    const mirrored = await cli('reader', 'log', '--dir', path.join(dir, 'mirror'));
    expect(mirrored.code).toBe(0);
    // Nothing is sequenced from here on: the tampering below is the only change to the log.
    await svc.service.integrator.stop();
  });
  afterAll(async () => {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('names the leaf of a receipt rewritten in the room and in the log', async () => {
    const outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
    const jws = outcome.decisions[0].receipt_jws as string;
    const forged = `${jws.slice(0, -2)}${jws.endsWith('AA') ? 'AB' : 'AA'}`;
    // The log's entry rewritten to the forged receipt's commitment leaf, under the genuine label.
    const { key_id, label } = outcome.decisions[0].transparency_log.position;
    const handle = db();
    const leaf = (handle.prepare('SELECT leaf FROM tlog_v2_entries WHERE idx = 1').get() as { leaf: string }).leaf;
    handle.prepare('UPDATE receipts SET jws = ? WHERE slug = ? AND sequence = 1').run(forged, room.slug);
    handle
      .prepare('UPDATE tlog_v2_entries SET leaf = ? WHERE idx = 1')
      .run(new TextDecoder().decode(receiptLeaf(forged, key_id, fromBase64(label))));
    try {
      const verified = await verify();
      expect(verified.code).not.toBe(0);
      expect(verified.stderr).toContain(
        'log: leaf 1: the entry the log serves is not the tree its checkpoint of size 3 signs',
      );
      const audited = await audit();
      expect(audited.code).not.toBe(0);
      expect(audited.stderr).toContain('leaf 1: its entry does not hash to the leaf hash');
    } finally {
      handle.prepare('UPDATE receipts SET jws = ? WHERE slug = ? AND sequence = 1').run(jws, room.slug);
      handle.prepare('UPDATE tlog_v2_entries SET leaf = ? WHERE idx = 1').run(leaf);
      handle.close();
    }
    // Restored, both pass again.
    expect((await verify()).code).toBe(0);
    expect((await audit()).code).toBe(0);
  });

  it('names the first missing leaf when the log is truncated', async () => {
    const handle = db();
    handle.transaction(() => {
      handle.prepare('DELETE FROM tlog_v2_entries WHERE idx >= 1').run();
      handle.prepare('DELETE FROM tlog_v2_checkpoints WHERE size > 1').run();
      handle.prepare('DELETE FROM tlog_v2_tiles WHERE level > 0').run();
      handle.prepare('UPDATE tlog_v2_tiles SET hashes = substr(hashes, 1, 32) WHERE level = 0 AND idx = 0').run();
      handle.prepare('UPDATE tlog_v2_state SET size = 1, published = 1').run();
    })();
    handle.close();
    expect((await call(svc.base, 'GET', '/log/checkpoint')).text.split('\n')[1]).toBe('1');

    const verified = await verify();
    expect(verified.code).not.toBe(0);
    expect(verified.stderr).toMatch(
      /rollback: the log now shows 1 leaves, but checkpoint 3 was seen .*: leaf 1 onward is gone/,
    );
    const audited = await audit();
    expect(audited.code).not.toBe(0);
    expect(audited.stderr).toContain(
      'leaf 1: the log was truncated: it now shows 1 leaves, but its signed checkpoint 3 (in the mirror) covers leaves up to 2',
    );
    // A reader who never saw the longer log still finds the room's receipts missing from it.
    const newcomer = await verify('newcomer');
    expect(newcomer.code).not.toBe(0);
    expect(newcomer.stderr).toContain('decisions[0]: not in the transparency log (checkpoint 1)');
  });
});
