/**
 * The floors under the write rows, measured in the same run.
 *
 * Durable write: bare fastify whose POST handler makes
 * one durable SQLite write before answering, the way the embedded store commits (WAL, `synchronous
 * = FULL`, writes of one event-loop turn grouped in one transaction, each caller answered after
 * its group's fsync). No room, no machine, no receipt: what any durable write costs here. A second
 * row also rewrites a 1 KiB row per request across 1,000 keys, as a room commit rewrites its
 * snapshot.
 *
 * Room turn: a choice sent to warm room actors (room + decision machines, 1,000 rooms) and the
 * persisted snapshot serialized, in process, without HTTP, credentials or storage: what the
 * actor runtime alone costs per choose, as turns per second of one core.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { actorFor, RoomHarness, T0 } from '../../test/unit/machines/harness.js';
import { type BenchCase, type BenchContext, type BenchRow, load, ratioTo } from '../table.js';

const KEYS = 1000;

/** The durable-write floor at `context.connections` (cases/choose-many-rooms.ts also takes it at 100). */
export async function measureDurableFloor(
  name: string,
  withRow: boolean,
  context: Pick<BenchContext, 'seconds' | 'connections'>,
): Promise<BenchRow> {
  const dir = await mkdtemp(path.join(tmpdir(), 'conclave-floor-'));
  const db = new Database(path.join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE log (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  db.exec('CREATE TABLE rows (key INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO log (body) VALUES (?)');
  const upsert = db.prepare('INSERT OR REPLACE INTO rows (key, body) VALUES (?, ?)');
  const row = 'x'.repeat(1024);
  let pending: { body: string; key: number; done: () => void }[] = [];
  const group = db.transaction((writes: typeof pending) => {
    for (const write of writes) {
      insert.run(write.body);
      if (withRow) upsert.run(write.key, row);
    }
  });
  const flush = () => {
    const writes = pending;
    pending = [];
    group.immediate(writes);
    for (const write of writes) write.done();
  };
  let next = 0;
  const app = Fastify({ logger: false });
  app.post('/write', (request) => {
    const body = JSON.stringify(request.body);
    return new Promise((resolve) => {
      pending.push({ body, key: next++ % KEYS, done: () => resolve({ ok: true }) });
      if (pending.length === 1) setImmediate(flush);
    });
  });
  const url = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  try {
    return await load(
      name,
      {
        url: `${url}/write`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ choice: 'alpha' }),
      },
      context,
    );
  } finally {
    await app.close();
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function roomTurns(context: BenchContext): BenchRow {
  const rooms = Array.from({ length: KEYS }, () => {
    const room = new RoomHarness();
    room.join('host');
    room.send({
      type: 'ASK',
      now: T0,
      actor: actorFor('host', true),
      decisionId: 'd1',
      input: { question: 'Benchmark?', options: ['alpha', 'beta'], voting_window: 1_209_600 },
    });
    return room;
  });
  const choose = (i: number) => {
    const room = rooms[i % KEYS]!;
    const reply = room.send({
      type: 'CHOOSE',
      now: T0 + 1 + i,
      actor: actorFor('host'),
      choice: i % 2 === 0 ? 'alpha' : 'beta',
      reason: null,
    });
    if (reply?.type !== 'reply' || !reply.ok) throw new Error('the room refused the benchmark choice');
    room.events.length = 0;
    JSON.stringify(room.actor.getPersistedSnapshot());
  };
  for (let i = 0; i < 20_000; i++) choose(i);
  const started = performance.now();
  let turns = 0;
  while (performance.now() - started < context.seconds * 1000) choose(turns++);
  const rps = Math.round(turns / ((performance.now() - started) / 1000));
  return { case: 'floor: room actor turn + snapshot', rps };
}

export const floors: BenchCase = {
  id: 'floor',
  async run(context) {
    const insert = await measureDurableFloor('floor: POST + 1 durable insert', false, context);
    const rewrite = await measureDurableFloor('floor: POST + insert + 1 KiB rewrite', true, context);
    const turn = roomTurns(context);
    return [
      { ...ratioTo(insert, context.baselines.post), note: 'ratio vs bare POST; no room, machine or receipt' },
      { ...ratioTo(rewrite, context.baselines.post), note: 'ratio vs bare POST; as a room commit rewrites its row' },
      {
        ...ratioTo(turn, context.baselines.post),
        note: `ratio vs bare POST; ${(1e6 / turn.rps!).toFixed(1)} µs a choose in xstate alone: no HTTP, no I/O`,
      },
    ];
  },
};
