/**
 * Compact rooms on Redis (docs/architecture.md, Storage, "Compact rooms"): a concluded room that has
 * been idle for `REDIS_COMPACT_AFTER_SECONDS` keeps its history as one brotli value instead of an
 * events zset, an event-ids hash, a receipts list and an archived zset, and its hash loses the
 * snapshot; it comes back expanded, in one script, before anything writes to it.
 *
 * Nothing takes the room lock here: compaction changes no content, so it only needs the room to be
 * at the version and revision it read (the compact script checks that), and an expansion only
 * needs the room to be still compacted under the token it read (the expand script checks that).
 * Both are one script each, so a process killed at any point leaves the room whole in one layout.
 */
import { randomBytes } from 'node:crypto';
import { type RoomRecord, StoreUnavailableError } from './port.js';
import type { Arg, DeadlineCalls } from './redis-calls.js';
import { archivedBytes, archivedText } from './redis-codec.js';
import { decodeCompactRoom, type ExpandedRoom, encodeCompactRoom } from './redis-compact-codec.js';
import type { RedisKeys } from './redis-keys.js';
import { concludedAt } from './retention.js';

type Reply = Buffer | null | number | Reply[];

export interface CompactionCommands {
  conclaveReadRoomBuffer(...args: Arg[]): Promise<[number, Reply, Reply?]>;
  conclaveGatherRoomBuffer(...args: Arg[]): Promise<[(Buffer | null)[], Buffer[], Buffer[], Buffer[]]>;
  conclaveCompactRoom(...args: Arg[]): Promise<number>;
  conclaveExpandRoom(...args: Arg[]): Promise<number>;
  sscan(key: string, cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
}

/** What a read of a room answers: from the expanded keys as they are, or the decoded compact value. */
export type RoomRead =
  | { compacted: false; reply: Reply }
  | { compacted: true; room: ExpandedRoom; fields: (string | null)[]; token: string };

/** What one compaction attempt did. */
/** 'raced': a commit landed, or someone took the room's lock, between the read and the write. */
export type CompactOutcome = 'compacted' | 'already' | 'open' | 'busy' | 'absent' | 'raced';

/** How often the sweep looks for concluded rooms left expanded (old data, lost schedules, expansions). */
export const COMPACT_SWEEP_MS = 60 * 60_000;
/** The first sweep waits this long after the store opens, so a starting process serves first. */
const FIRST_SWEEP_MS = 60_000;
/** Rooms whose compaction this process has scheduled; past it they are left to the sweep. */
const MAX_SCHEDULED = 10_000;
const EXPAND_TRIES = 3;
/** After an expansion, how long no compaction takes the room back: the write it was for lands first. */
const EXPANDED_HOLD_MS = 5_000;

export class RedisCompaction {
  private readonly scheduled = new Map<string, NodeJS.Timeout>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<number> | null = null;

  constructor(
    private readonly redis: CompactionCommands,
    private readonly key: RedisKeys,
    private readonly calls: DeadlineCalls,
    private readonly clock: () => number,
    /** REDIS_COMPACT_AFTER_SECONDS in ms: how long a concluded room stays idle before it compacts; null = never. */
    readonly afterMs: number | null,
  ) {}

  /** Where a background compaction's failure is told (the service logs it); the room stays expanded. */
  onError: (error: unknown) => void = () => {};

  private keys(slug: string): string[] {
    const k = this.key;
    return [k.room(slug), k.compact(slug), k.events(slug), k.eventIds(slug), k.receipts(slug), k.archived(slug)];
  }

  /** One read of a room in whichever layout it is (redis-compact-scripts.ts, READ_ROOM_SCRIPT). */
  async read(slug: string, ...what: Arg[]): Promise<RoomRead> {
    const [compacted, reply, fields] = await this.calls.call(() =>
      this.redis.conclaveReadRoomBuffer(...this.keys(slug), ...what),
    );
    if (compacted === 0) return { compacted: false, reply };
    const strings = (fields as (Buffer | null)[]).map((field) => field?.toString('utf8') ?? null);
    return { compacted: true, room: decodeCompactRoom(reply as Buffer), fields: strings, token: strings[4] ?? '' };
  }

  /** A compacted room's record: its hash's fields and the snapshot from the compact value. */
  static recordOf(slug: string, read: Extract<RoomRead, { compacted: true }>): RoomRecord {
    const [version, head, nextDeadline, revision] = read.fields;
    return {
      slug,
      version: Number(version),
      head: Number(head),
      snapshot: read.room.snapshot,
      next_deadline: nextDeadline ? Number(nextDeadline) : null,
      ...(revision ? { revision } : {}),
    };
  }

  /**
   * Compacts the room if it is concluded, expanded, and has been idle (no event) for `idleMs`.
   * Before anything is deleted the value is decoded and compared with what was read.
   */
  async compact(slug: string, idleMs = this.afterMs ?? 0): Promise<CompactOutcome> {
    const [fields, eventItems, receiptItems, archivedItems] = await this.calls.call(() =>
      this.redis.conclaveGatherRoomBuffer(...this.keys(slug)),
    );
    const [version, revision, compacted, snapshot, deadline] = fields.map((field) => field?.toString('utf8') ?? null);
    if (version === null || version === undefined) return 'absent';
    if (compacted) return 'already';
    // Due work (a deadline) writes again soon: the room stays expanded until it is done.
    if (deadline) return 'busy';
    if (!snapshot || concludedAt(snapshot) === null) return 'open';
    const events = eventItems.map((item) => item.toString('utf8'));
    const last = events.at(-1);
    const lastAt = last === undefined ? 0 : Date.parse((JSON.parse(last) as { occurred_at: string }).occurred_at);
    if (lastAt + idleMs > this.clock()) return 'busy';
    const archived: ExpandedRoom['archived'] = [];
    for (let i = 0; i < archivedItems.length; i += 2) {
      archived.push({ seq: Number(archivedItems[i + 1]), json: archivedText(archivedItems[i]!) });
    }
    const room: ExpandedRoom = {
      snapshot,
      events,
      receipts: receiptItems.map((item) => item.toString('utf8')),
      archived,
    };
    const value = encodeCompactRoom(room);
    if (JSON.stringify(decodeCompactRoom(value)) !== JSON.stringify(room)) {
      throw new Error(`room ${slug}: its compact value does not decode to what was read; left expanded`);
    }
    const token = randomBytes(6).toString('hex');
    const done = await this.calls.call(() =>
      this.redis.conclaveCompactRoom(...this.keys(slug), this.key.lock(slug), version, revision ?? '', value, token),
    );
    return done === 1 ? 'compacted' : 'raced';
  }

  /** Brings a compacted room back to the expanded layout (before a write). False when it was not compacted. */
  async expand(slug: string): Promise<boolean> {
    for (let attempt = 0; attempt < EXPAND_TRIES; attempt++) {
      const read = await this.read(slug, 'load');
      if (!read.compacted) return false;
      const { room, token } = read;
      const args: Arg[] = [token, EXPANDED_HOLD_MS, room.snapshot, room.events.length];
      for (const text of room.events) {
        const { seq, id } = JSON.parse(text) as { seq: number; id: string };
        args.push(seq, id, text);
      }
      args.push(room.receipts.length, ...room.receipts, room.archived.length);
      for (const a of room.archived) args.push(a.seq, archivedBytes(a.json));
      const done = await this.calls.call(() => this.redis.conclaveExpandRoom(...this.keys(slug), ...args));
      if (done === 1) return true;
    }
    throw new StoreUnavailableError(`room ${slug} changed layout ${EXPAND_TRIES} times while it was expanded; retry`);
  }

  /** After the commit that concluded a room: compact it once it has been idle long enough, off the request path. */
  schedule(slug: string): void {
    if (this.afterMs === null || this.scheduled.has(slug) || this.scheduled.size >= MAX_SCHEDULED) return;
    const timer = setTimeout(() => {
      this.scheduled.delete(slug);
      this.compact(slug).catch((error) => this.onError(error));
    }, this.afterMs);
    timer.unref();
    this.scheduled.set(slug, timer);
  }

  /** One pass over every room (SSCAN of the slug registry): concluded rooms idle long enough are compacted. */
  async sweep(): Promise<number> {
    let compacted = 0;
    let cursor = '0';
    do {
      const [next, slugs] = await this.calls.call(() => this.redis.sscan(this.key.slugs, cursor, 'COUNT', 200));
      cursor = next;
      for (const slug of slugs) {
        try {
          if ((await this.compact(slug)) === 'compacted') compacted++;
        } catch (error) {
          this.onError(error);
        }
      }
    } while (cursor !== '0');
    return compacted;
  }

  /**
   * The timer's sweep: one process of the deployment per period, whichever takes the sweep lease
   * first, so a deployment of P processes walks its slug registry once an hour, not P times (a
   * million rooms is a million small script calls a pass). A sweeper killed mid-pass leaves the rest
   * to the next period; rooms concluded since are compacted by their own schedule meanwhile.
   */
  async sweepIfDue(): Promise<number> {
    const lease = await this.calls.call(() =>
      this.redis.set(this.key.compactSweep, randomBytes(6).toString('hex'), 'PX', COMPACT_SWEEP_MS - 60_000, 'NX'),
    );
    return lease === 'OK' ? this.sweep() : 0;
  }

  /** Sweeps (if no other process has this period) a minute after start, then every COMPACT_SWEEP_MS (unref'd, one pass at a time). */
  start(): void {
    if (this.afterMs === null || this.sweepTimer !== null) return;
    const run = () => {
      this.sweeping ??= this.sweepIfDue()
        .catch((error) => {
          this.onError(error);
          return 0;
        })
        .finally(() => {
          this.sweeping = null;
        });
    };
    this.sweepTimer = setTimeout(() => {
      run();
      this.sweepTimer = setInterval(run, COMPACT_SWEEP_MS);
      this.sweepTimer.unref();
    }, FIRST_SWEEP_MS);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const timer of this.scheduled.values()) clearTimeout(timer);
    this.scheduled.clear();
  }
}
