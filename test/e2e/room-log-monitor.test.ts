/**
 * A member of a private room audits its room in the commitment log over real HTTP (a real service,
 * real SQLite), with the client (`auditRoomLog`, `verifyReceiptInLog`) and with the command line
 * (`conclave verify <room url>`) — docs/transparency-log.md, Verifying:
 *
 * - every leaf of the room is found among other rooms' leaves, and every receipt is proved in the
 *   signed tree, although nothing in the log names the room;
 * - an outsider is refused the positions exactly as it is refused the outcome;
 * - a fork fabricated in the store's log (a second, different receipt for position 1, appended and
 *   published with a valid checkpoint, as an operator holding the keys could) is reported by both,
 *   naming the position and the leaves.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRoomLog } from '../../src/client/room-log.js';
import { type PositionKey, verifyReceiptInLog } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { LOG_LEASE_SLUG, type LogAppend } from '../../src/store/tlog-port.js';
import { leafHash } from '../../src/tlog/merkle.js';
import { fromBase64 } from '../../src/tlog/note.js';
import { receiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { concatHashes, TILE_HEIGHT } from '../../src/tlog/tiles.js';
import { MerkleTree } from '../../src/tlog/tree.js';
import { type Run, runCliWithin } from '../cli/run-cli.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';

const PASSWORD = 'correct horse battery staple';
const encoder = new TextEncoder();

describe('a member audits its private room in the commitment log', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let dir: string;
  let room: { slug: string; token: string };
  let positionKeys: PositionKey[];
  let verifierKey: string;

  const cli = (...args: string[]): Promise<Run> =>
    runCliWithin(
      60_000,
      { ...process.env, CONCLAVE_CONFIG: path.join(dir, 'config', 'config.json'), CONCLAVE_URL: svc.base },
      ...args,
    );
  const verify = () => cli('verify', `${svc.base}/r/${room.slug}`, '--token', room.token, '--log-wait', '2');

  beforeAll(async () => {
    svc = await startService({ clock });
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-room-log-'));
    // Other rooms' leaves around this room's: the member must pick its own out by label.
    await roomWithReceipts(svc.base, clock);
    const created = (
      await call(svc.base, 'POST', '/api/rooms', {
        body: {
          question: 'Merge with Acme?',
          options: ['yes', 'no'],
          password: PASSWORD,
          config: { voting_window: 60 },
        },
      })
    ).body;
    expect(created.config.visibility).toBe('private');
    room = { slug: created.slug, token: created.creator_token };
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/choose`, { token: room.token, body: { choice: 'yes' } });
    clock.advance(61_000);
    await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token });
    const closed = await call(svc.base, 'POST', `/api/rooms/${room.slug}/close`, {
      token: room.token,
      body: { statement: 'merged' },
    });
    expect(closed.status).toBe(200);
    await roomWithReceipts(svc.base, clock, true);
    await svc.service.integrator.integrateNow();
    const auditLog = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log;
    positionKeys = auditLog.position_keys;
    verifierKey = auditLog.verifier_key;
  });
  afterAll(async () => {
    await svc?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('finds every leaf of the room and proves each receipt in the signed tree', async () => {
    const audit = await auditRoomLog({ baseUrl: svc.base, slug: room.slug, auth: { token: room.token }, waitMs: 2000 });
    expect(audit).toMatchObject({ ok: true, leaves_found: 2, tree_size: 5, forks: [], missing: [], unseen: [] });
    // Leaf 0 is the first room's; 1 and 2 this room's decision and conclusion; 3 and 4 the last room's.
    expect(audit.positions.map((p) => p.leaf_indexes)).toEqual([[1], [2], []]);
    expect(audit.receipts.map((r) => r.row)).toEqual(['decisions[0]', 'conclusion']);

    const outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
    for (const row of [...outcome.decisions, outcome.conclusion]) {
      const checkpoint = await verifyReceiptInLog(row.receipt_jws, row.transparency_log, verifierKey, positionKeys);
      expect(checkpoint.size).toBe(5);
    }
  });

  it('refuses an outsider the positions exactly as the outcome', async () => {
    const outcome = await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`);
    const positions = await call(svc.base, 'GET', `/api/rooms/${room.slug}/log-positions`);
    expect(outcome.status).toBeGreaterThanOrEqual(400);
    expect(positions.status).toBe(outcome.status);
    expect(positions.body.error.code).toBe(outcome.body.error.code);
    await expect(auditRoomLog({ baseUrl: svc.base, slug: room.slug, waitMs: 0 })).rejects.toMatchObject({
      status: outcome.status,
    });
  });

  it('conclave verify <room url> finds the room’s leaves', async () => {
    const run = await verify();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('decisions[0]: leaf 1 of checkpoint 5');
    expect(run.stdout).toContain("found 2 of the room's leaves in the log (tree size 5); no position has two");
  });

  it('reports a fork fabricated in the store’s log, through the client and the command line', async () => {
    // The operator's forgery: a second receipt for position 1, labelled as the service labels it,
    // appended through the store's log with its tiles and a validly signed checkpoint.
    const positions = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/log-positions`, { token: room.token }))
      .body;
    const first = positions.positions[0].labels[0];
    const outcome = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
    const genuine = outcome.decisions[0].receipt_jws as string;
    const forged = `${genuine.slice(0, -2)}${genuine.endsWith('AA') ? 'AB' : 'AA'}`;
    const size = await appendForged(receiptLeaf(forged, first.key_id, fromBase64(first.label)));
    expect(size).toBe(6);

    const audit = await auditRoomLog({ baseUrl: svc.base, slug: room.slug, auth: { token: room.token }, waitMs: 0 });
    expect(audit.ok).toBe(false);
    expect(audit.forks).toEqual([
      { sequence: 1, leaf_indexes: [1, 5], commitments: [outcome.decisions[0].receipt_hash, expect.any(String)] },
    ]);
    const run = await verify();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "fork: position 1 of the room's chain (decisions[0]) has 2 different receipts in the log, at leaves 1, 5 of checkpoint 6",
    );
  });

  /** Appends one leaf as the integrator would (tiles, fenced on the log lease) and publishes it. */
  async function appendForged(data: Uint8Array): Promise<number> {
    const { store } = svc.service;
    await svc.service.integrator.stop();
    const lease = await store.lock(LOG_LEASE_SLUG, 30_000, 0);
    const state = await store.tlog.state();
    const tree = new MerkleTree();
    for (const entry of await store.tlog.entries(0, state.size)) tree.append([leafHash(encoder.encode(entry))]);
    const levels = (t: MerkleTree) => {
      const out: number[] = [];
      for (let level = 0; t.countAt(level * TILE_HEIGHT) > 0 || level === 0; level++) out.push(level);
      return out;
    };
    const before = levels(tree).map((level) => tree.countAt(level * TILE_HEIGHT));
    tree.append([leafHash(data)]);
    const tiles = levels(tree).flatMap((level) => {
      const from = before[level] ?? 0;
      const to = tree.countAt(level * TILE_HEIGHT);
      return to > from ? [{ level, from, hashes: concatHashes(tree.hashesAt(level * TILE_HEIGHT, from, to)) }] : [];
    });
    const text = new TextDecoder().decode(data);
    await store.tlog.append({
      expected_size: state.size,
      // The live log's entry shape (its exact data and the receipt it commits to).
      leaves: [{ data: text, receipt_hash: `sha256:forged-${state.size}` }] as unknown as LogAppend['leaves'],
      tiles,
      consumed: 0,
      rooms: {},
      fence: lease.token,
    });
    const note = svc.service.services.tlog?.noteSigner().signCheckpoint(tree.size, tree.root());
    await store.tlog.publish(tree.size, note as string, lease.token);
    await lease.release();
    return tree.size;
  }
});
