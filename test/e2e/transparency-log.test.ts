/**
 * The transparency log over real HTTP on SQLite: every receipt (decisions and conclusions, several
 * rooms) becomes a leaf in commit order; the checkpoint verifies with the key discovery publishes;
 * each `/outcome` row carries an inclusion proof that verifies; the tiles and entry bundles rebuild
 * the checkpoint's root; every published checkpoint stays retrievable and consistent with the next;
 * bad parameters are 4xx envelopes; receipts stored before the log existed are back-filled.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { verifyCheckpoint, verifyConsistency, verifyInclusion } from '../../src/client/tlog.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { leafHash, rootOfLeafHashes } from '../../src/tlog/merkle.js';
import { fromBase64, toBase64 } from '../../src/tlog/note.js';
import { positionAlpha } from '../../src/tlog/position.js';
import { parseReceiptLeaf, receiptLeaf } from '../../src/tlog/receipt-leaf.js';
import { decodeEntryBundle, splitHashes } from '../../src/tlog/tiles.js';
import { vrfVerify } from '../../src/tlog/vrf.js';
import { Redis } from 'ioredis';
import { copyFixtureRoomToRedis } from '../support/fixture-to-redis.js';
import { startRedisServer } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { roomWithReceipts } from '../support/tlog.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface PositionKey {
  key_id: string;
  public_key: string;
}

/**
 * An /outcome row's log field checked from the receipt alone: the position label's VRF proof
 * against discovery's position key and the receipt's signed room_id and sequence, then the
 * commitment leaf rebuilt from the JWS and that label, included in the signed checkpoint.
 */
async function verifyRowInLog(
  jws: string,
  field: {
    index: number;
    checkpoint: string;
    inclusion_proof: string[];
    position: { key_id: string; label: string; proof: string };
  },
  verifierKey: string,
  positionKeys: PositionKey[],
): Promise<string> {
  const claims = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')).svc as {
    room_id: string;
    sequence: number;
  };
  const key = positionKeys.find((k) => k.key_id === field.position.key_id);
  expect(key).toBeDefined();
  const output = vrfVerify(
    new Uint8Array(Buffer.from(key?.public_key ?? '', 'base64url')),
    positionAlpha(claims.room_id, claims.sequence),
    new Uint8Array(Buffer.from(field.position.proof, 'base64url')),
  );
  expect(output && Buffer.from(output.slice(0, 32)).toString('base64')).toBe(field.position.label);
  const leaf = decoder.decode(
    receiptLeaf(jws, field.position.key_id, new Uint8Array(Buffer.from(field.position.label, 'base64'))),
  );
  const checkpoint = await verifyCheckpoint(field.checkpoint, verifierKey);
  expect(verifyInclusion(leaf, field.index, field.inclusion_proof, checkpoint)).toBe(true);
  return leaf;
}

async function binary(base: string, url: string): Promise<{ status: number; bytes: Uint8Array; headers: Headers }> {
  const response = await fetch(`${base}${url}`);
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
}

describe('the transparency log (SQLite, real HTTP)', () => {
  const clock = new ManualClock();
  let svc: RunningService;
  let verifierKey: string;
  let positionKeys: PositionKey[];

  beforeAll(async () => {
    svc = await startService({ clock });
    const auditLog = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log;
    verifierKey = auditLog.verifier_key;
    positionKeys = auditLog.position_keys;
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('publishes discovery audit_log with a C2SP verifier key of the log origin', async () => {
    const discovery = (await call(svc.base, 'GET', '/.well-known/svc.json')).body;
    const origin = `${svc.base.replace('http://', '')}/log/v2`;
    expect(discovery.audit_log).toMatchObject({
      kind: 'c2sp-tlog-tiles',
      log_url: `${svc.base}/log/`,
      checkpoint_url: `${svc.base}/log/checkpoint`,
      origin,
    });
    expect(discovery.audit_log.leaf).toMatch(/^conclave-receipt-commitment\/v1/);
    expect(discovery.audit_log.position_keys).toEqual([
      { key_id: expect.stringMatching(/^[0-9a-f]{8}$/), public_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
    ]);
    expect(discovery.audit_log.frozen).toBeUndefined();
    expect(verifierKey).toMatch(new RegExp(`^${origin.replace(/[.]/g, '\\.')}\\+[0-9a-f]{8}\\+A[A-Za-z0-9+/]{43}$`));
  });

  it('logs every receipt of every room in commit order, with proofs in /outcome', async () => {
    const rooms = [];
    for (let i = 0; i < 3; i++) rooms.push(await roomWithReceipts(svc.base, clock, i === 1));
    await svc.service.integrator.integrateNow();

    const latest = await call(svc.base, 'GET', '/log/checkpoint');
    expect(latest.status).toBe(200);
    expect(latest.headers.get('content-type')).toContain('text/plain');
    const checkpoint = await verifyCheckpoint(latest.text, verifierKey);
    expect(checkpoint.size).toBe(4);

    // Commit order: room 0's receipt, room 1's decision then conclusion, room 2's.
    const expected: string[] = [];
    const receipts: string[] = [];
    for (const { slug, token } of rooms) {
      const outcome = (await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token })).body;
      const rows = [...outcome.decisions, ...(outcome.conclusion ? [outcome.conclusion] : [])];
      for (const row of rows) {
        expect(row.transparency_log).toBeDefined();
        expected.push(await verifyRowInLog(row.receipt_jws, row.transparency_log, verifierKey, positionKeys));
        receipts.push(row.receipt_jws);
        expect(row.transparency_log.inclusion_proof.length).toBeLessThanOrEqual(2);
        expect(row.transparency_log.index).toBe(expected.length - 1);
      }
    }

    const entries = await binary(svc.base, '/log/tile/entries/000.p/4');
    expect(entries.status).toBe(200);
    expect(decodeEntryBundle(entries.bytes).map((e) => decoder.decode(e))).toEqual(expected);
    // A leaf names no room: only the receipt's SHA-256 and an unlinkable label.
    for (const [i, jws] of receipts.entries()) {
      expect(entries.bytes.length).toBeLessThan(4 * 200);
      expect(decoder.decode(entries.bytes)).not.toContain(jws.split('.')[1]?.slice(0, 20));
      const leaf = parseReceiptLeaf(encoder.encode(expected[i]));
      expect(Buffer.from(leaf?.commitment ?? []).toString('hex')).toBe(createHash('sha256').update(jws).digest('hex'));
    }
    const tile = await binary(svc.base, '/log/tile/0/000.p/4');
    const hashes = splitHashes(tile.bytes);
    expect(hashes.map(toBase64)).toEqual(expected.map((jws) => toBase64(leafHash(encoder.encode(jws)))));
    expect(toBase64(rootOfLeafHashes(hashes))).toBe(checkpoint.root);
    expect(tile.headers.get('cache-control')).not.toContain('immutable');
    // A narrower partial tile is a prefix; one wider than the tree, or the full tile, is not served yet.
    expect(splitHashes((await binary(svc.base, '/log/tile/0/000.p/3')).bytes)).toEqual(hashes.slice(0, 3));
    expect((await binary(svc.base, '/log/tile/0/000.p/5')).status).toBe(404);
    expect((await binary(svc.base, '/log/tile/0/000')).status).toBe(404);

    // The proof endpoints agree with the /outcome proofs.
    const proof = await call(svc.base, 'GET', '/log/proof/inclusion?index=2&size=4');
    expect(proof.status).toBe(200);
    expect(verifyInclusion(expected[2] as string, 2, proof.body.inclusion_proof, checkpoint)).toBe(true);
    expect(verifyInclusion(expected[1] as string, 2, proof.body.inclusion_proof, checkpoint)).toBe(false);
  });

  it('keeps every checkpoint by size, each consistent with the next', async () => {
    const first = await verifyCheckpoint((await call(svc.base, 'GET', '/log/checkpoint')).text, verifierKey);
    await roomWithReceipts(svc.base, clock);
    await svc.service.integrator.integrateNow();
    const second = await verifyCheckpoint((await call(svc.base, 'GET', '/log/checkpoint')).text, verifierKey);
    expect(second.size).toBe(first.size + 1);
    const old = await call(svc.base, 'GET', `/log/checkpoint/${first.size}`);
    expect(old.status).toBe(200);
    expect(old.text).toBe(first.note);
    expect(old.headers.get('cache-control')).toContain('immutable');
    const proof = await call(svc.base, 'GET', `/log/proof/consistency?first=${first.size}&second=${second.size}`);
    expect(proof.status).toBe(200);
    expect(verifyConsistency(first, second, proof.body.consistency_proof)).toBe(true);
    // A forked root (one bit) is caught.
    const forged = fromBase64(second.root);
    forged[0] = (forged[0] as number) ^ 1;
    expect(verifyConsistency(first, { ...second, root: toBase64(forged) }, proof.body.consistency_proof)).toBe(false);
    // The empty tree was published first.
    expect((await call(svc.base, 'GET', '/log/checkpoint/0')).status).toBe(200);
  });

  it('answers bad parameters with 4xx envelopes', async () => {
    const cases: [string, number][] = [
      ['/log/proof/inclusion?index=x&size=1', 400],
      ['/log/proof/inclusion?index=-1&size=1', 400],
      ['/log/proof/inclusion?size=1', 400],
      ['/log/proof/inclusion?index=01&size=2', 400],
      ['/log/proof/inclusion?index=5&size=2', 400],
      ['/log/proof/inclusion?index=0&size=99999', 404],
      ['/log/proof/consistency?first=3&second=1', 400],
      ['/log/proof/consistency?first=1&second=99999999999999999999', 400],
      ['/log/checkpoint/abc', 400],
      ['/log/checkpoint/12345', 404],
      ['/log/tile/0/x000/001', 400],
      ['/log/tile/64/000', 400],
      ['/log/tile/0/000.p/256', 400],
      ['/log/tile/0/000.p/0', 400],
      ['/log/tile/nope', 400],
      ['/log/tile/0/001', 404],
    ];
    for (const [url, status] of cases) {
      const response = await call(svc.base, 'GET', url);
      expect([url, response.status]).toEqual([url, status]);
      expect(response.body.error.code).toMatch(/^(input\.invalid|vendor:conclave:not_found)$/);
    }
  });

  it('says when the proofs of receipts not logged yet will follow, until they are there', async () => {
    // Sealed and closed while no integrator runs: two receipts, neither in the log yet.
    await svc.service.integrator.stop();
    let room: { slug: string; token: string };
    try {
      room = await roomWithReceipts(svc.base, clock, true);
      const fresh = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
      expect(fresh.decisions[0].transparency_log).toBeUndefined();
      expect(fresh.conclusion.transparency_log).toBeUndefined();
      expect(fresh.log_proofs_pending).toEqual({
        receipts: 2,
        retry_after_seconds: 1,
        hint: expect.stringMatching(/^2 receipts are not in the transparency log yet; read the outcome again in 1 s/),
      });
    } finally {
      svc.service.integrator.start();
    }
    await svc.service.integrator.integrateNow();
    const later = (await call(svc.base, 'GET', `/api/rooms/${room.slug}/outcome`, { token: room.token })).body;
    expect(later.log_proofs_pending).toBeUndefined();
    expect(later.decisions[0].transparency_log).toBeDefined();
    expect(later.conclusion.transparency_log).toBeDefined();
  });
});

const FIXTURE = path.join(import.meta.dirname, '../fixtures/pre-speech');
const redis = await startRedisServer();

describe('receipts stored before the log existed', () => {
  it.each(['sqlite', 'redis'])('are back-filled when the store is upgraded (%s, fixture)', async (store) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'conclave-tlog-backfill-'));
    await cp(FIXTURE, dir, { recursive: true });
    let env: Record<string, string> = {};
    if (store === 'redis') {
      if (!redis) throw new Error('redis-server is required for this test');
      const prefix = `backfill-${Date.now()}:`;
      // The fixture's room as the code before the log stored it: no queue entry for its receipt.
      await copyFixtureRoomToRedis(FIXTURE, 'pkteaaptsr', redis.url, async () => {
        const raw = new Redis(redis.url);
        for (const key of await raw.keys('conclave:*')) await raw.rename(key, key.replace('conclave:', prefix));
        await raw.del(`${prefix}tlog:{~log}:queue`);
        await raw.quit();
      });
      env = { STORE: 'redis', REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
    }
    const svc = await startService({ dataDir: dir, env, clock: new ManualClock(Date.parse('2026-11-01T10:01:00Z')) });
    try {
      await svc.service.integrator.integrateNow();
      const key = (await call(svc.base, 'GET', '/.well-known/svc.json')).body.audit_log.verifier_key;
      const checkpoint = await verifyCheckpoint((await call(svc.base, 'GET', '/log/checkpoint')).text, key);
      expect(checkpoint.size).toBe(1);
      const entries = await binary(svc.base, '/log/tile/entries/000.p/1');
      const [leaf] = decodeEntryBundle(entries.bytes).map((e) => parseReceiptLeaf(e));
      const stored = await svc.service.store.receipts('pkteaaptsr');
      expect(Buffer.from(leaf?.commitment ?? []).toString('hex')).toBe(
        createHash('sha256')
          .update(stored[0]?.jws ?? '')
          .digest('hex'),
      );
      // No frozen log: the store had none before.
      expect((await call(svc.base, 'GET', '/log/v1/checkpoint')).status).toBe(404);
    } finally {
      await svc.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

afterAll(async () => {
  await redis?.stop();
});
