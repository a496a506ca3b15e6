/**
 * The RoomStore contract: one suite, run against every adapter on real backing storage.
 * An adapter is correct when it passes this suite; adapter files add only what is specific to them.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/runtime/clock.js';
import {
  type CommitBatch,
  type CommittedRoom,
  type RoomRecord,
  type RoomStore,
  StoreConflictError,
  type StoredEvent,
  type StoredReceipt,
  StoreUnavailableError,
} from '../../../src/store/port.js';

/** Fresh, empty backing storage (a new SQLite file, a new Redis key prefix, ...). */
export interface Backing {
  /** Opens another store instance, with its own connection, on this same storage. */
  open(clock?: () => number): Promise<RoomStore>;
}

export interface StoreTarget {
  fresh(): Promise<Backing>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function event(seq: number, overrides: Partial<StoredEvent> = {}): StoredEvent {
  return {
    id: randomUUID(),
    seq,
    event_type: 'discussion.posted',
    occurred_at: new Date(Date.UTC(2026, 4, 1, 10, 0, 0, seq)).toISOString(),
    decision_id: seq % 2 === 0 ? randomUUID() : null,
    data: { body: `message ${seq}`, stance: null, nested: { tags: ['a', 'b'], n: seq, ok: true, empty: {} } },
    actor: seq % 3 === 0 ? null : `participant-${seq % 5}`,
    ...overrides,
  };
}

export function receipt(sequence: number): StoredReceipt {
  return {
    sequence,
    decision_id: sequence % 2 === 0 ? null : `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    jws: `eyJhbGciOiJFZERTQSJ9.payload-${sequence}.sig`,
    receipt_hash: `sha256:${sequence.toString(16).padStart(64, '0')}`,
  };
}

/** The room a commit stored, without what the store learnt in the same write (CommittedRoom.subscribed). */
function stored({ subscribed: _subscribed, ...record }: CommittedRoom): RoomRecord {
  return record;
}

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

function batch(slug: string, expected_version: number, rest: Partial<CommitBatch> = {}): CommitBatch {
  return {
    slug,
    expected_version,
    snapshot: JSON.stringify({ value: 'open', version: expected_version + 1 }),
    events: [],
    receipts: [],
    next_deadline: null,
    ...rest,
  };
}

async function everyEvent(store: RoomStore, slug: string): Promise<StoredEvent[]> {
  return store.events(slug, 0, 100_000);
}

export function storeContract(target: StoreTarget): void {
  let backing: Backing;
  let opened: RoomStore[];
  let store: RoomStore;
  let clock: ManualClock;

  /** Another instance on the same storage, as a second process would have. */
  async function openAnother(): Promise<RoomStore> {
    const another = await backing.open(() => clock.now());
    opened.push(another);
    return another;
  }

  beforeEach(async () => {
    backing = await target.fresh();
    opened = [];
    clock = new ManualClock();
    store = await openAnother();
  });

  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  describe('slugs', () => {
    it('reserves a slug once, and never again, even after the room is deleted', async () => {
      expect(await store.reserveSlug('k7m3pq2dnx')).toBe(true);
      expect(await store.reserveSlug('k7m3pq2dnx')).toBe(false);
      await store.commit(batch('k7m3pq2dnx', 0));
      expect(await store.deleteRoom('k7m3pq2dnx')).toBe(true);
      expect(await store.reserveSlug('k7m3pq2dnx')).toBe(false);
      expect(await store.reserveSlug('other0slug')).toBe(true);
    });

    it('claims the slug of a room created without a prior reservation', async () => {
      await store.commit(batch('unreserved', 0));
      expect(await store.reserveSlug('unreserved')).toBe(false);
    });
  });

  describe('credential links', () => {
    it('lists the rooms linked to a credential, most recent first, without duplicates', async () => {
      for (const slug of ['linkroom01', 'linkroom02', 'linkroom03']) await store.commit(batch(slug, 0));
      await store.linkRoom('sub:did:key:z6Mk', 'linkroom01', 1_000);
      await store.linkRoom('sub:did:key:z6Mk', 'linkroom02', 2_000);
      await store.linkRoom('sub:did:key:z6Mk', 'linkroom01', 3_000);
      await store.linkRoom('tokenhash', 'linkroom03', 1_500);
      expect(await store.linkedRooms('sub:did:key:z6Mk', 10)).toEqual(['linkroom01', 'linkroom02']);
      expect(await store.linkedRooms('sub:did:key:z6Mk', 1)).toEqual(['linkroom01']);
      expect(await store.linkedRooms('nobody', 10)).toEqual([]);
    });
  });

  describe('create and load', () => {
    it('creates a room at version 1 and loads it back', async () => {
      const events = range(1, 3).map((seq) => event(seq));
      const created = await store.commit(
        batch('room1', 0, { snapshot: '{"s":1}', events, receipts: [receipt(1)], next_deadline: 1_000 }),
      );
      expect(created).toMatchObject({ slug: 'room1', version: 1, head: 3, snapshot: '{"s":1}', next_deadline: 1_000 });
      expect(await store.load('room1')).toEqual(stored(created));
      expect(await everyEvent(store, 'room1')).toEqual(events);
      expect(await store.receipts('room1')).toEqual([receipt(1)]);
    });

    it('returns null for an unknown room and empty collections', async () => {
      expect(await store.load('nosuchroom')).toBeNull();
      expect(await store.events('nosuchroom', 0, 10)).toEqual([]);
      expect(await store.receipts('nosuchroom')).toEqual([]);
      expect(await store.eventById('nosuchroom', randomUUID())).toBeNull();
    });

    it('creates on a reserved slug, and refuses to create over an existing room', async () => {
      await store.reserveSlug('room2');
      await store.commit(batch('room2', 0, { snapshot: 'first' }));
      await expect(store.commit(batch('room2', 0, { snapshot: 'second' }))).rejects.toThrow(StoreConflictError);
      expect((await store.load('room2'))?.snapshot).toBe('first');
    });

    it('answers unchanged while a room is where the reader saw it, and the room once another instance wrote it', async () => {
      const created = await store.commit(batch('checked', 0, { snapshot: 'first' }));
      const known = { version: created.version, revision: created.revision };
      expect(await store.roomExists('checked')).toBe(true);
      expect(await store.loadIfChanged('checked', known)).toBe('unchanged');
      const another = await openAnother();
      const next = await another.commit({
        ...batch('checked', created.version, { snapshot: 'second' }),
        ...(created.revision ? { expected_revision: created.revision } : {}),
      });
      expect(await store.loadIfChanged('checked', known)).toEqual(stored(next));
      expect(await store.loadIfChanged('checked', { version: next.version, revision: next.revision })).toBe(
        'unchanged',
      );
      expect(await store.loadIfChanged('nosuchroom', known)).toBeNull();
      expect(await store.roomExists('nosuchroom')).toBe(false);
    });

    it('creates a room with no events at head 0, and keeps a null deadline', async () => {
      const created = await store.commit(batch('quiet', 0));
      expect(created.head).toBe(0);
      expect((await store.load('quiet'))?.next_deadline).toBeNull();
    });
  });

  describe('commit', () => {
    it('bumps the version and appends, carrying the snapshot and deadline', async () => {
      await store.commit(batch('r', 0, { events: [event(1)], next_deadline: 500 }));
      const next = await store.commit(batch('r', 1, { snapshot: 'v2', events: [event(2), event(3)] }));
      expect(next).toMatchObject({ slug: 'r', version: 2, head: 3, snapshot: 'v2', next_deadline: null });
      expect(await store.load('r')).toEqual(stored(next));
      const empty = await store.commit(batch('r', 2, { snapshot: 'v3' }));
      expect(empty).toMatchObject({ version: 3, head: 3, snapshot: 'v3' });
    });

    it('rejects a stale expected_version and writes nothing', async () => {
      await store.commit(
        batch('r', 0, { snapshot: 'v1', events: [event(1)], receipts: [receipt(1)], next_deadline: 100 }),
      );
      await store.commit(batch('r', 1, { snapshot: 'v2', events: [event(2)], next_deadline: 200 }));
      const before = {
        room: await store.load('r'),
        events: await everyEvent(store, 'r'),
        receipts: await store.receipts('r'),
        next: await store.nextDeadline(),
      };
      const stale = batch('r', 1, {
        snapshot: 'stale',
        events: [event(3)],
        receipts: [receipt(2)],
        next_deadline: 50,
        idempotency: [{ scope: 'r|stale', fingerprint: 'f', status: 200, body: '{}', created_at: clock.now() }],
      });
      await expect(store.commit(stale)).rejects.toThrow(StoreConflictError);
      await expect(store.commit({ ...stale, expected_version: 7 })).rejects.toThrow(StoreConflictError);
      await expect(store.commit(batch('never', 3))).rejects.toThrow(StoreConflictError);
      expect({
        room: await store.load('r'),
        events: await everyEvent(store, 'r'),
        receipts: await store.receipts('r'),
        next: await store.nextDeadline(),
      }).toEqual(before);
      expect(await store.idempotency('r|stale')).toBeNull();
      expect(await store.eventById('r', stale.events[0]!.id)).toBeNull();
      expect(await store.load('never')).toBeNull();
    });

    it('lets exactly one of two racing writers with the same expected_version win', async () => {
      await store.commit(batch('race', 0));
      const other = await openAnother();
      const results = await Promise.allSettled([
        store.commit(batch('race', 1, { snapshot: 'a', events: [event(1)] })),
        other.commit(batch('race', 1, { snapshot: 'b', events: [event(1)] })),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected');
      expect((rejected as PromiseRejectedResult).reason).toBeInstanceOf(StoreConflictError);
      expect((await store.load('race'))?.version).toBe(2);
      expect(await everyEvent(store, 'race')).toHaveLength(1);
    });

    it.each([
      ['a gap after the head', [5]],
      ['a restart at seq 1', [1, 2]],
      ['a hole inside the batch', [3, 5]],
      ['a repeated seq inside the batch', [3, 3]],
      ['a descending batch', [4, 3]],
    ])('rejects events with %s and writes nothing', async (_, seqs) => {
      await store.commit(batch('log', 0, { events: [event(1), event(2)] }));
      const before = await everyEvent(store, 'log');
      const events = seqs.map((seq) => event(seq));
      await expect(store.commit(batch('log', 1, { snapshot: 'changed', events }))).rejects.toThrow(StoreConflictError);
      expect(await everyEvent(store, 'log')).toEqual(before);
      expect(await store.load('log')).toMatchObject({ version: 1, head: 2 });
    });

    it('rejects an event id that is already stored or repeated in the batch', async () => {
      const first = event(1);
      await store.commit(batch('ids', 0, { events: [first] }));
      await expect(store.commit(batch('ids', 1, { events: [event(2, { id: first.id })] }))).rejects.toThrow(
        StoreConflictError,
      );
      const twin = randomUUID();
      await expect(
        store.commit(batch('ids', 1, { events: [event(2, { id: twin }), event(3, { id: twin })] })),
      ).rejects.toThrow(StoreConflictError);
      expect(await store.load('ids')).toMatchObject({ version: 1, head: 1 });
    });

    it('rejects receipts that do not continue the chain and writes nothing', async () => {
      await store.commit(batch('chain', 0, { receipts: [receipt(1), receipt(2)] }));
      for (const sequences of [[4], [1], [3, 5], [2, 3]]) {
        const receipts = sequences.map(receipt);
        await expect(store.commit(batch('chain', 1, { receipts, events: [event(1)] }))).rejects.toThrow(
          StoreConflictError,
        );
      }
      expect(await store.receipts('chain')).toHaveLength(2);
      expect(await store.load('chain')).toMatchObject({ version: 1, head: 0 });
    });
  });

  describe('events', () => {
    it('pages 1,000 events after a cursor, ascending, each exactly once', async () => {
      const written: StoredEvent[] = [];
      for (let version = 0; version < 20; version++) {
        const events = range(version * 50 + 1, 50).map((seq) => event(seq));
        written.push(...events);
        await store.commit(batch('big', version, { events }));
      }
      expect((await store.load('big'))?.head).toBe(1000);

      const read: StoredEvent[] = [];
      let cursor = 0;
      let pages = 0;
      for (;;) {
        const page = await store.events('big', cursor, 100);
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(100);
        read.push(...page);
        cursor = page.at(-1)!.seq;
        pages++;
      }
      expect(pages).toBe(10);
      expect(read.map((e) => e.seq)).toEqual(range(1, 1000));
      expect(read).toEqual(written);
      expect((await store.events('big', 995, 100)).map((e) => e.seq)).toEqual([996, 997, 998, 999, 1000]);
      expect(await store.events('big', 1000, 100)).toEqual([]);
    });

    it('finds an event by id within its own room only', async () => {
      const events = range(1, 5).map((seq) => event(seq));
      await store.commit(batch('a', 0, { events }));
      await store.commit(batch('b', 0, { events: [event(1)] }));
      expect(await store.eventById('a', events[3]!.id)).toEqual(events[3]);
      expect(await store.eventById('b', events[3]!.id)).toBeNull();
      expect(await store.eventById('a', randomUUID())).toBeNull();
    });
  });

  describe('receipts', () => {
    it('returns the chain in order across commits', async () => {
      const chain = range(1, 7).map(receipt);
      await store.commit(batch('c', 0, { receipts: chain.slice(0, 1) }));
      await store.commit(batch('c', 1, { receipts: chain.slice(1, 4) }));
      await store.commit(batch('c', 2));
      await store.commit(batch('c', 3, { receipts: chain.slice(4) }));
      expect(await store.receipts('c')).toEqual(chain);
    });
  });

  describe('idempotency', () => {
    const record = (scope: string) => ({
      scope,
      fingerprint: '{"choice":2}',
      status: 201,
      body: '{"id":"é€ \\"quoted\\"","n":1.50}',
      created_at: clock.now(),
    });

    it('round-trips a record committed with the room', async () => {
      const own = record('idem|scope-hash-1');
      await store.commit(batch('idem', 0, { idempotency: [own] }));
      expect(await store.idempotency(own.scope)).toEqual(own);
      expect(await store.idempotency('idem|unknown')).toBeNull();
    });

    it('commits the records of several commands with one batch, and none when the batch conflicts', async () => {
      const first = record('many|hash-1');
      const second = record('many|hash-2');
      const elsewhere = record('-|hash-3');
      await store.commit(batch('many', 0, { idempotency: [first, second, elsewhere] }));
      expect(await store.idempotency(first.scope)).toEqual(first);
      expect(await store.idempotency(second.scope)).toEqual(second);
      expect(await store.idempotency(elsewhere.scope)).toEqual(elsewhere);
      const lost = record('many|hash-4');
      await expect(store.commit(batch('many', 0, { idempotency: [lost] }))).rejects.toBeInstanceOf(StoreConflictError);
      expect(await store.idempotency(lost.scope)).toBeNull();
    });

    it('finds records of room-less scopes and of unconventional scopes', async () => {
      const roomless = record('-|create-hash');
      await store.commit(batch('made', 0, { idempotency: [roomless] }));
      const opaque = record('no-bar-opaque-hash');
      await store.commit(batch('made', 1, { idempotency: [opaque] }));
      expect(await store.idempotency(roomless.scope)).toEqual(roomless);
      expect(await store.idempotency(opaque.scope)).toEqual(opaque);
    });

    it('forgets a record once it is 24 h old', async () => {
      const own = record('aging|hash');
      await store.commit(batch('aging', 0, { idempotency: [own] }));
      clock.advance(DAY_MS - 1);
      expect(await store.idempotency(own.scope)).toEqual(own);
      clock.advance(2);
      expect(await store.idempotency(own.scope)).toBeNull();
      // Old records may be purged by later commits; a fresh one under the same scope still works.
      await store.commit(batch('aging', 1));
      const renewed = record('aging|hash');
      await store.commit(batch('aging', 2, { idempotency: [renewed] }));
      expect(await store.idempotency(own.scope)).toEqual(renewed);
    });
  });

  describe('room slugs and meta', () => {
    it('pages through every room, each once', async () => {
      const slugs = Array.from({ length: 25 }, (_, i) => `page${String(i).padStart(2, '0')}`);
      for (const slug of slugs) await store.commit(batch(slug, 0));
      const seen: string[] = [];
      let cursor: string | null = '';
      for (let pages = 0; cursor !== null && pages < 100; pages++) {
        const page: { slugs: string[]; cursor: string | null } = await store.roomSlugs(cursor, 10);
        seen.push(...page.slugs);
        cursor = page.cursor;
      }
      expect(cursor).toBeNull();
      expect([...new Set(seen)].sort()).toEqual(slugs);
    });

    it('keeps service-wide settings', async () => {
      expect(await store.meta('snapshot_format')).toBeNull();
      await store.setMeta('snapshot_format', '2');
      await store.setMeta('snapshot_format', '3');
      expect(await store.meta('snapshot_format')).toBe('3');
    });
  });

  describe('archived decisions', () => {
    const archived = (seq: number) => ({
      decision_id: `d-${seq}`,
      seq,
      data: `{"id":"d-${seq}","q":"é \\"${seq}\\""}`,
    });

    it('stores them with the commit that archives them, and reads them back in seq order', async () => {
      await store.commit(batch('arch', 0, { archived: [archived(2)] }));
      await store.commit(batch('arch', 1, { archived: [archived(1), archived(3)] }));
      expect(await store.archivedDecisions('arch')).toEqual([archived(1), archived(2), archived(3)]);
      expect(await store.archivedDecisions('arch', 1)).toEqual([archived(2), archived(3)]);
      expect(await store.archivedDecisions('nowhere')).toEqual([]);
    });

    it('stores none when the commit conflicts, and none survive the room', async () => {
      await store.commit(batch('arch2', 0));
      await expect(store.commit(batch('arch2', 0, { archived: [archived(1)] }))).rejects.toBeInstanceOf(
        StoreConflictError,
      );
      expect(await store.archivedDecisions('arch2')).toEqual([]);
      await store.commit(batch('arch2', 1, { archived: [archived(1)] }));
      expect(await store.deleteRoom('arch2')).toBe(true);
      expect(await store.archivedDecisions('arch2')).toEqual([]);
    });
  });

  describe('deleteRoom', () => {
    it('removes the room, its events, receipts and deadline, and allows a fresh start', async () => {
      const events = [event(1), event(2)];
      await store.commit(batch('gone', 0, { events, receipts: [receipt(1)], next_deadline: 100 }));
      expect(await store.deleteRoom('gone')).toBe(true);
      expect(await store.load('gone')).toBeNull();
      expect(await store.events('gone', 0, 100)).toEqual([]);
      expect(await store.receipts('gone')).toEqual([]);
      expect(await store.eventById('gone', events[0]!.id)).toBeNull();
      expect(await store.dueRooms(1_000, 10)).toEqual([]);
      expect(await store.nextDeadline()).toBeNull();
      expect(await store.deleteRoom('gone')).toBe(false);

      const again = await store.commit(batch('gone', 0, { events: [event(1)], receipts: [receipt(1)] }));
      expect(again).toMatchObject({ version: 1, head: 1 });
    });
  });

  describe('locks', () => {
    it('is exclusive: a second taker waits, then gives up with StoreUnavailableError', async () => {
      const other = await openAnother();
      const held = await store.lock('locked', 10_000, 0);
      const started = Date.now();
      await expect(other.lock('locked', 10_000, 150)).rejects.toThrow(StoreUnavailableError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      await expect(store.lock('locked', 10_000, 0)).rejects.toThrow(StoreUnavailableError);
      await held.release();
    });

    it('lets the next taker in after release, including one already waiting', async () => {
      const other = await openAnother();
      const first = await store.lock('handoff', 10_000, 0);
      const waiting = other.lock('handoff', 10_000, 2_000);
      await sleep(50);
      await first.release();
      const second = await waiting;
      expect(second.token).not.toBe(first.token);
      await second.release();
      await (await store.lock('handoff', 10_000, 0)).release();
    });

    it('locks rooms independently', async () => {
      const a = await store.lock('one', 10_000, 0);
      const b = await store.lock('two', 10_000, 0);
      await Promise.all([a.release(), b.release()]);
    });

    it('fences: an expired holder is taken over, its commit rejected, its release harmless', async () => {
      const other = await openAnother();
      await store.commit(batch('fenced', 0));
      const old = await store.lock('fenced', 100, 0);
      await sleep(160);
      const current = await other.lock('fenced', 10_000, 0);

      await expect(store.commit(batch('fenced', 1, { snapshot: 'late', fence: old.token }))).rejects.toThrow(
        StoreConflictError,
      );
      expect((await store.load('fenced'))?.version).toBe(1);

      await old.release();
      await expect(store.lock('fenced', 10_000, 50)).rejects.toThrow(StoreUnavailableError);
      const committed = await other.commit(batch('fenced', 1, { snapshot: 'current', fence: current.token }));
      expect(committed.version).toBe(2);
      await current.release();
    });

    it('renews: a renewed lock outlives its TTL; a lost one cannot be renewed', async () => {
      const other = await openAnother();
      await store.commit(batch('renewed', 0));
      const held = await store.lock('renewed', 150, 0);
      for (let i = 0; i < 4; i++) {
        await sleep(60);
        expect(await held.renew()).toBe(true);
      }
      // 240 ms after taking a 150 ms lock, it still holds: nobody else gets it.
      await expect(other.lock('renewed', 10_000, 0)).rejects.toThrow(StoreUnavailableError);
      const committed = await store.commit(batch('renewed', 1, { fence: held.token }));
      expect(committed.version).toBe(2);
      // Left alone past its TTL, it lapses; the next holder's lock cannot be renewed by the old token.
      await sleep(200);
      const next = await other.lock('renewed', 10_000, 0);
      expect(await held.renew()).toBe(false);
      await held.release();
      await expect(store.lock('renewed', 10_000, 0)).rejects.toThrow(StoreUnavailableError);
      await next.release();
    });

    it('rejects a fenced commit when nobody holds the lock', async () => {
      await store.commit(batch('unlocked', 0));
      const lock = await store.lock('unlocked', 10_000, 0);
      await lock.release();
      await expect(store.commit(batch('unlocked', 1, { fence: lock.token }))).rejects.toThrow(StoreConflictError);
      await expect(store.commit(batch('unlocked', 1, { fence: 'forged' }))).rejects.toThrow(StoreConflictError);
    });

    it('lets the lock go with a commit that says so, and keeps it through a refused one', async () => {
      const other = await openAnother();
      await store.commit(batch('committed-away', 0));
      const lock = await store.lock('committed-away', 10_000, 0);
      await expect(store.commit(batch('committed-away', 5, { fence: lock.token, release_lock: true }))).rejects.toThrow(
        StoreConflictError,
      );
      await expect(other.lock('committed-away', 10_000, 0)).rejects.toThrow(StoreUnavailableError);
      await store.commit(batch('committed-away', 1, { fence: lock.token, release_lock: true }));
      const next = await other.lock('committed-away', 10_000, 0);
      await lock.release();
      await expect(store.lock('committed-away', 10_000, 0)).rejects.toThrow(StoreUnavailableError);
      await next.release();
    });

    it('fences creation too', async () => {
      const lock = await store.lock('fresh', 10_000, 0);
      await expect(store.commit(batch('fresh', 0, { fence: 'forged' }))).rejects.toThrow(StoreConflictError);
      expect(await store.load('fresh')).toBeNull();
      await store.commit(batch('fresh', 0, { fence: lock.token }));
      await lock.release();
    });

    it('never throws from release, even after close', async () => {
      const lock = await store.lock('closing', 10_000, 0);
      await store.close();
      await expect(lock.release()).resolves.toBeUndefined();
    });
  });

  describe('deadlines', () => {
    it('lists due rooms earliest first, honours the limit, and follows deadline changes', async () => {
      expect(await store.nextDeadline()).toBeNull();
      await store.commit(batch('late', 0, { next_deadline: 3_000 }));
      await store.commit(batch('early', 0, { next_deadline: 1_000 }));
      await store.commit(batch('middle', 0, { next_deadline: 2_000 }));
      await store.commit(batch('none', 0, { next_deadline: null }));

      expect(await store.nextDeadline()).toBe(1_000);
      expect(await store.dueRooms(999, 10)).toEqual([]);
      expect(await store.dueRooms(2_000, 10)).toEqual(['early', 'middle']);
      expect(await store.dueRooms(10_000, 2)).toEqual(['early', 'middle']);
      expect(await store.dueRooms(10_000, 10)).toEqual(['early', 'middle', 'late']);

      await store.commit(batch('early', 1, { next_deadline: null }));
      await store.commit(batch('late', 1, { next_deadline: 500 }));
      expect(await store.nextDeadline()).toBe(500);
      expect(await store.dueRooms(10_000, 10)).toEqual(['late', 'middle']);
    });
  });

  describe('lifecycle', () => {
    it('keeps everything across close and reopen', async () => {
      const events = range(1, 10).map((seq) => event(seq));
      const own = { scope: 'kept|h', fingerprint: 'f', status: 200, body: '{"ok":true}', created_at: clock.now() };
      await store.reserveSlug('kept');
      const room = await store.commit(
        batch('kept', 0, { events, receipts: [receipt(1), receipt(2)], next_deadline: 42, idempotency: [own] }),
      );
      await store.close();

      const reopened = await openAnother();
      expect(await reopened.load('kept')).toEqual(stored(room));
      expect(await reopened.events('kept', 0, 100)).toEqual(events);
      expect(await reopened.receipts('kept')).toEqual([receipt(1), receipt(2)]);
      expect(await reopened.idempotency('kept|h')).toEqual(own);
      expect(await reopened.dueRooms(42, 10)).toEqual(['kept']);
      expect(await reopened.reserveSlug('kept')).toBe(false);
      await reopened.ping();
    });

    it('reports StoreUnavailableError once closed', async () => {
      await store.ping();
      await store.close();
      await expect(store.ping()).rejects.toThrow(StoreUnavailableError);
      await expect(store.load('any')).rejects.toThrow(StoreUnavailableError);
      await expect(store.commit(batch('any', 0))).rejects.toThrow(StoreUnavailableError);
      await expect(store.lock('any', 1_000, 0)).rejects.toThrow(StoreUnavailableError);
    });
  });
}
