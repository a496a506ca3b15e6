/**
 * Data written before room snapshots stopped carrying the discussion and the resolved decisions (test/fixtures/pre-speech,
 * written by commit c4dd5d6) keeps working: the room reads as before, its next commits store the
 * new shape, receipts count the same messages, and the chain verifies. On SQLite from the fixture's
 * own file, and on Redis from the same room written into a private redis-server as it was stored.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../../src/client/verify.js';
import { decodeCompact } from '../../../src/receipts/compact.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { copyFixtureRoomToRedis } from '../../support/fixture-to-redis.js';
import { startRedisServer, type TestRedisServer } from '../../support/redis-server.js';
import { call, type RunningService, startService } from '../../support/service.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/pre-speech');
const SLUG = 'pkteaaptsr';
const ALICE = 't_8_zZ8_RNG8SwCDCP2B1FrGJkpuB-uK3ma2FhdeRk6mY';
const BOB = 't_Op0TYJa5bVw8fjbZMkMriJ6BLAZiq73obEld_tMyCzM';
const CAROL = 't_1H4unLxgvKWLZPsEQQ4eGNrwG-1AdiU8F8fK9xwSUL4';
/**
 * The room's URL on the service that wrote the fixture (it listened on a port of its own). The
 * upgraded service keeps it, as a deployment keeps its PUBLIC_BASE_URL, so that every receipt of the
 * room, old and new, names the same room.
 */
const FIXTURE_BASE = 'http://127.0.0.1:42359';
/** The fixture's clock when it was written, plus a minute. */
const LATER = 1793527214000 + 60_000;
const BODIES = [
  'first thoughts',
  'I lean a',
  'b is safer',
  'still a',
  'between decisions',
  'agreed, next topic',
  'c please',
  'really, c',
  'thinking',
];

function storedRoom(dataDir: string): { snapshot: any; archived: unknown[] } {
  const db = new Database(path.join(dataDir, 'conclave.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT snapshot FROM rooms WHERE slug = ?').get(SLUG) as { snapshot: string };
    const archived = db.prepare('SELECT seq FROM archived_decisions WHERE slug = ? ORDER BY seq').all(SLUG);
    return { snapshot: JSON.parse(row.snapshot), archived };
  } finally {
    db.close();
  }
}

function receiptCount(jws: string): number {
  return (decodeCompact(jws).payload as any).svc.deliberation_message_count;
}

/** What the old room shows, then a decision sealed and the room closed on the new code. */
async function exercise(svc: RunningService): Promise<void> {
  const view = await call(svc.base, 'GET', `/api/rooms/${SLUG}`, { token: ALICE });
  expect(view.status).toBe(200);
  expect(view.body.discussion.map((m: any) => m.said)).toEqual(BODIES);
  expect(view.body.discussion_earlier).toBeUndefined();
  expect(view.body.decided.map((d: any) => d.seq)).toEqual([1]);
  const full = await call(svc.base, 'GET', `/api/rooms/${SLUG}?include=full`, { token: ALICE });
  expect(full.body.discussion.map((m: any) => m.body)).toEqual(BODIES);

  const live = (await svc.service.services.registry.read(SLUG))!;
  const second = live.decisions.find((d) => d.data.seq === 2)!;
  expect(live.room.speech.total).toBe(9);
  expect(live.room.speech.roomScoped).toHaveLength(2);
  expect(Object.keys(live.room.speech.byDecision)).toEqual([second.data.id]);
  expect(live.room.speech.byDecision[second.data.id]!.total).toBe(3);

  // The caps still count the old messages: bob posted two of decision 2's three.
  const bobId = live.room.members.find((m) => m.displayName === 'bob')!.id;
  expect(live.room.speech.byDecision[second.data.id]!.byParticipant[bobId]).toBe(2);

  svc.service.services.baseUrl = FIXTURE_BASE;
  // Bob chose c before the upgrade; Alice's c makes a majority of three and seals decision 2.
  const chosen = await call(svc.base, 'POST', `/api/rooms/${SLUG}/choose`, { token: ALICE, body: { choice: 'c' } });
  expect(chosen.body.status).toBe('resolved');
  const late = await call(svc.base, 'POST', `/api/rooms/${SLUG}/discuss`, { token: CAROL, body: { body: 'late' } });
  expect(late.status).toBe(200);
  const closed = await call(svc.base, 'POST', `/api/rooms/${SLUG}/close`, { token: ALICE, body: {} });
  expect(closed.status).toBe(200);

  const outcome = await call(svc.base, 'GET', `/api/rooms/${SLUG}/outcome`, { token: BOB });
  const jwks = await call(svc.base, 'GET', '/.well-known/jwks.json');
  const report = await verifyRoomReceiptChain(outcome.body, { jwks: jwks.body, room: `${FIXTURE_BASE}/r/${SLUG}` });
  expect(report.errors).toEqual([]);
  expect(report.ok).toBe(true);
  const [first, sealed] = outcome.body.decisions;
  expect(receiptCount(first.receipt_jws)).toBe(4); // signed by the old code
  expect(receiptCount(sealed.receipt_jws)).toBe(3); // signed by the new code, from the migrated counters
  expect(receiptCount(outcome.body.conclusion.receipt_jws ?? outcome.body.conclusion_receipt_jws)).toBe(10);
}

describe('snapshots written before the discussion left them', () => {
  let dir = '';
  let redis: TestRedisServer | null = null;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conclave-pre-speech-'));
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('upgrade on load from the SQLite file, and are stored in the new shape by the next commit', async () => {
    const dataDir = path.join(dir, 'sqlite');
    await cp(FIXTURE, dataDir, { recursive: true });
    const svc = await startService({ clock: new ManualClock(LATER), dataDir });
    try {
      // At start-up the stale room gets one empty turn: stored in the new shape before anyone writes.
      expect(await svc.service.upgraded).toEqual({ checked: 1, upgraded: 1, alreadyCurrent: false });
      const upgraded = storedRoom(dataDir);
      expect(upgraded.snapshot.context.discussion).toBeUndefined();
      expect(upgraded.snapshot.context.speech.total).toBe(9);
      expect(Object.keys(upgraded.snapshot.children)).toHaveLength(1); // decision 2, still open
      expect(upgraded.archived).toEqual([{ seq: 1 }]);
      await exercise(svc);
    } finally {
      await svc.stop({ keepData: true });
    }
    const { snapshot: stored, archived } = storedRoom(dataDir);
    // Resolved decisions left the snapshot for the archive (the fixture's decision 1 among them).
    expect(Object.keys(stored.children)).toEqual([]);
    expect(archived).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect(stored.context.discussion).toBeUndefined();
    expect(stored.context.speech.total).toBe(10);
    expect(stored.context.speech.byDecision).toEqual({});
    // Loading the new shape again is a no-op: the room still reads the same.
    const again = await startService({ clock: new ManualClock(LATER + 60_000), dataDir });
    try {
      expect(await again.service.upgraded).toEqual({ checked: 0, upgraded: 0, alreadyCurrent: true });
      const full = await call(again.base, 'GET', `/api/rooms/${SLUG}?include=full`, { token: ALICE });
      expect(full.body.discussion.map((m: any) => m.body)).toEqual([...BODIES, 'late']);
      const outcome = await call(again.base, 'GET', `/api/rooms/${SLUG}/outcome`, { token: BOB });
      expect(outcome.body.decisions.map((d: any) => [d.seq, d.resolved_winner])).toEqual([
        [1, 'a'],
        [2, 'c'],
      ]);
    } finally {
      await again.stop({ keepData: true });
    }
  });

  it('upgrade on load from Redis', async () => {
    if (!redis) throw new Error('redis-server is required for this test');
    // The fixture's room, stored in Redis exactly as the code before wrote it.
    await copyFixtureRoomToRedis(FIXTURE, SLUG, redis.url);

    const dataDir = path.join(dir, 'redis');
    await cp(FIXTURE, dataDir, { recursive: true });
    const svc = await startService({
      clock: new ManualClock(LATER),
      dataDir,
      env: { STORE: 'redis', REDIS_URL: redis.url },
    });
    try {
      expect(await svc.service.upgraded).toEqual({ checked: 1, upgraded: 1, alreadyCurrent: false });
      await exercise(svc);
    } finally {
      await svc.stop({ keepData: true });
    }
  });
});
