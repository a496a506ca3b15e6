/**
 * The store's side of a batch (docs/architecture.md, The write path): take the room's lock, bring
 * the cached room to the stored version, run the batch, and commit what it collected atomically
 * with a version check, letting the lock go with the write.
 */
import { randomUUID } from 'node:crypto';
import { iso } from '../domain/format.js';
import { type ProtocolError, protocolError } from '../errors.js';
import type { CommittedRoom, IdempotencyRecord, StoredEvent } from '../store/port.js';
import { type HeldLock, lockRoom } from './held-lock.js';
import type { RoomCache } from './room-cache.js';
import { type Entry, stateOf } from './room-entry.js';
import type { RoomLoader } from './room-loader.js';
import { roomDeadline } from './room-state.js';
import type { Collected } from './room-steps.js';
import type { RuntimeDeps } from './turn-types.js';

export class StoreTurn {
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly cache: RoomCache,
    private readonly loader: RoomLoader,
  ) {}

  /**
   * Runs `work` on the room at its stored version, under its lock on a shared store. A failed
   * `work` leaves the cached actor rebuilt from the last committed snapshot.
   */
  async underLock<T>(slug: string, work: (entry: Entry, lock: HeldLock | null) => Promise<T>): Promise<T> {
    const lock = await this.lock(slug);
    try {
      const entry = this.loader.currentUnder(slug, lock) ?? (await this.loader.under(slug, lock));
      if (!entry) throw roomNotFound(slug);
      try {
        return await work(entry, lock);
      } catch (error) {
        this.cache.rebuild(entry);
        throw error;
      }
    } finally {
      // A commit let the lock go with its write (release_lock); otherwise (nothing to commit, or a
      // refused commit) it is released here, not awaited: the batch's answers need not wait one more
      // round trip, and the release is compare-and-delete (it never frees a lock taken since).
      void lock?.release();
    }
  }

  /** The room's lock, or null on the embedded store (held-lock.ts). */
  lock(slug: string): Promise<HeldLock | null> {
    return lockRoom(this.deps.store, slug, this.cache, this.deps.onLock);
  }

  /**
   * Commits snapshot + events (seq assigned here) + receipts + archived decisions + idempotency
   * records in one write with a version check, then moves the entry to the committed version.
   */
  async commit(
    entry: Entry,
    collected: Collected,
    records: IdempotencyRecord[],
    lock: HeldLock | null = null,
  ): Promise<void> {
    const events: StoredEvent[] = collected.drafts.map((draft, i) => ({
      id: randomUUID(),
      seq: entry.head + 1 + i,
      event_type: draft.event_type,
      occurred_at: iso(draft.occurred_at),
      decision_id: draft.decision_id,
      data: draft.data,
      actor: draft.actor,
    }));
    const snapshotText = JSON.stringify(entry.actor.getPersistedSnapshot());
    const state = stateOf(entry);
    const nextDeadline = roomDeadline(state);
    const created = entry.version === 0;
    const stored: CommittedRoom = await this.deps.store.commit({
      slug: entry.slug,
      expected_version: entry.version,
      snapshot: snapshotText,
      events,
      receipts: collected.receipts,
      ...(collected.archived.length > 0 ? { archived: collected.archived } : {}),
      ...(records.length > 0 ? { idempotency: records } : {}),
      next_deadline: nextDeadline,
      // The commit lets the lock go itself and wakes the next waiter: one round trip fewer
      // between this batch's write and the next holder's (docs/architecture.md, "One room, many processes").
      ...(lock ? { fence: lock.token, release_lock: true } : {}),
      ...(entry.revision !== undefined ? { expected_revision: entry.revision } : {}),
    });
    lock?.releasedByCommit();
    entry.version = stored.version;
    entry.revision = stored.revision;
    entry.archiving = [];
    entry.head = stored.head;
    entry.snapshotText = snapshotText;
    entry.stale = false;
    entry.committed = { ...state, version: stored.version, head: stored.head };
    // The room may have grown: weigh it again (and make room for it). A cached twin loaded while this
    // entry was evicted mid-turn is now behind the store: this entry replaces it.
    if (this.cache.has(entry.slug)) this.cache.remember(entry);
    this.deps.onCommit?.({
      slug: entry.slug,
      head: stored.head,
      events,
      nextDeadline,
      created,
      receipts: collected.receipts.length,
      state: entry.committed,
      ...(stored.subscribed === undefined ? {} : { subscribed: stored.subscribed }),
    });
  }
}

export function roomNotFound(slug: string): ProtocolError {
  return protocolError(
    'room.not_found',
    `Room ${slug} does not exist (or was deleted). Check the slug; rooms are created with POST /api/rooms.`,
    { details: { slug } },
  );
}
