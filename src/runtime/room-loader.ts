/**
 * Brings a cached room to the stored version (docs/architecture.md, "One room, many readers" and
 * "One room, many processes"): the cache is the truth on the embedded store; on a shared store the
 * room is checked against the store, or installed from what the lock's round trip brought along.
 */
import { isAtVersion } from '../store/common.js';
import type { RoomLock, RoomRecord, RoomStore } from '../store/port.js';
import { archiveOf } from './room-archive.js';
import type { RoomCache } from './room-cache.js';
import { type Entry, restoreActor } from './room-entry.js';
import { type RoomState, roomStateOf } from './room-state.js';
import { SharedRefresh } from './shared-refresh.js';

export class RoomLoader {
  /** Loads of a room from a shared store: one at a time per room, shared by whoever asks meanwhile. */
  private readonly refreshes = new SharedRefresh<Entry | null>();

  constructor(
    private readonly store: RoomStore,
    private readonly cache: RoomCache,
  ) {}

  /**
   * The cached entry, brought to the stored version. On the embedded store the cache is the truth.
   * On a shared store another process may have written the room, so it is loaded again — through
   * `refreshes`: one load of a room at a time, begun after the caller asked, shared by everyone who
   * asks meanwhile (docs/architecture.md, "One room, many readers").
   */
  fresh(slug: string): Promise<Entry | null> {
    const cached = this.cache.get(slug);
    if (cached && this.store.kind === 'sqlite') return Promise.resolve(cached);
    return this.refreshes.run(slug, () => this.refresh(slug));
  }

  /**
   * The cached entry when the lock, read in its own round trip, found the room at the entry's
   * version and revision: nobody else commits while the lock is held, so the entry is current and
   * needs no load. Null otherwise (no lock read, another process wrote, or nothing cached): load it.
   */
  currentUnder(slug: string, lock: RoomLock | null): Entry | null {
    const cached = this.cache.get(slug);
    if (!cached || !lock?.found) return null;
    return isAtVersion(lock.found, cached) ? cached : null;
  }

  /**
   * The room brought to the stored version under the lock. When the lock's own round trip brought
   * the room along (`loaded`: the store held something other than the cache) it is installed from
   * that, with no further read: nobody else commits while the lock is held. Otherwise it is loaded.
   */
  under(slug: string, lock: RoomLock | null): Promise<Entry | null> {
    if (lock?.loaded === undefined) return this.fresh(slug);
    const loaded = lock.loaded;
    return this.refresh(slug, false, async () => loaded);
  }

  /**
   * Loads the room and returns the cached entry if it is the stored version, else a new entry
   * restored from the stored snapshot. The entry it replaces is not stopped: a batch or a caller may
   * still hold it, and a stopped room actor drops its decision children (which is how a read used to
   * find `decision <id> missing`). Nothing else refers to a replaced actor, and it arms no timers.
   * `read` supplies the record instead of the store (the room a lock's round trip brought along).
   */
  private async refresh(slug: string, again = false, read?: () => Promise<RoomRecord | null>): Promise<Entry | null> {
    const before = this.cache.get(slug);
    const versionBefore = before?.version;
    // A cached room is checked against the store in one round trip; its snapshot travels only when
    // another process changed it (docs/architecture.md, "One room, many processes").
    const record = read
      ? await read()
      : before
        ? await this.store.loadIfChanged(slug, { version: before.version, revision: before.revision })
        : await this.store.load(slug);
    const current = this.cache.get(slug);
    // This process created the room or committed to it while the load was in flight: what the load
    // read is not newer than the cache (the commit's reply came first, and the lock was still held).
    if (current && (current !== before || current.version !== versionBefore)) return current;
    if (record === 'unchanged') {
      // Evicted (its actor stopped) while the check was in flight: restore it from a full load.
      return current ?? this.refresh(slug, again);
    }
    if (!record) {
      if (current) this.cache.evict(slug);
      return null;
    }
    if (current && current.version === record.version && current.revision === record.revision) return current;
    const versionAtLoad = current?.version;
    const { actor, stale } = restoreActor(record.snapshot);
    const { archived, chars } = await archiveOf(this.store, slug, actor, current);
    let committed: RoomState;
    try {
      committed = roomStateOf(actor.getSnapshot(), record.version, record.head, archived);
    } catch (error) {
      // The archive no longer holds a decision the loaded snapshot archived: the room was deleted
      // after the load. Load it once more, which answers what the store holds now.
      if (again) throw error;
      return this.refresh(slug, true);
    }
    const entry: Entry = {
      slug,
      actor,
      stale,
      version: record.version,
      revision: record.revision,
      head: record.head,
      snapshotText: record.snapshot,
      archived,
      archivedChars: chars,
      archiving: [],
      committed,
    };
    // A commit on the entry it replaces landed meanwhile (only a batch that lost its lock can): keep
    // the newer cache; the caller still gets this whole, consistent version.
    const latest = this.cache.get(slug);
    if (latest === current && latest?.version === versionAtLoad) this.cache.remember(entry);
    return entry;
  }
}
