/**
 * The actor cache: this process's room entries, least recently used first, bounded in count and in
 * weight (docs/architecture.md, "Memory and disk against one client"), and the rebuild of an entry
 * whose batch failed.
 */
import { type Entry, restoreActor } from './room-entry.js';

/** ROOM_CACHE_SIZE and ROOM_CACHE_BYTES defaults (src/config.ts; docs/architecture.md, Memory). */
export const DEFAULT_CACHED_ROOMS = 1000;
export const DEFAULT_CACHED_BYTES = 32 * 1024 * 1024;

/**
 * A cached room's weight: the snapshot text it keeps (to rebuild the actor after a refused command)
 * plus the actor's objects parsed from that text, plus its archived decisions, at two bytes per
 * character (V8's widest string form). An estimate that errs high: Latin-1 text takes one.
 */
const BYTES_PER_CHAR = 2;
function weightOf(entry: Entry): number {
  return BYTES_PER_CHAR * (2 * entry.snapshotText.length + entry.archivedChars);
}

export class RoomCache {
  /** Least recently used first (Map order). */
  private readonly entries = new Map<string, Entry>();
  /** Each cached room's weight as it was counted into `bytes` (a room grows between weighings). */
  private readonly weights = new Map<string, number>();
  private bytes = 0;
  private readonly maxRooms: number;
  private readonly maxBytes: number;

  /** `busy`: whether a room has a turn queued or in flight (its evicted actor keeps running). */
  constructor(
    limits: { maxCachedRooms?: number | undefined; maxCachedBytes?: number | undefined },
    private readonly busy: (slug: string) => boolean,
  ) {
    this.maxRooms = limits.maxCachedRooms ?? DEFAULT_CACHED_ROOMS;
    this.maxBytes = limits.maxCachedBytes ?? DEFAULT_CACHED_BYTES;
  }

  get(slug: string): Entry | undefined {
    return this.entries.get(slug);
  }

  has(slug: string): boolean {
    return this.entries.has(slug);
  }

  /** Room actors held in this process. */
  get size(): number {
    return this.entries.size;
  }

  /** Their weight together (weightOf), held under maxCachedBytes. */
  get weight(): number {
    return this.bytes;
  }

  /**
   * Caches the entry as the most recently used, then evicts the least recently used until both the
   * count and the weight fit. A room heavier than the whole budget is not kept at all: it is served
   * from the store on each request (it reloads like any evicted room).
   */
  remember(entry: Entry): void {
    this.uncache(entry.slug);
    const weight = weightOf(entry);
    this.entries.set(entry.slug, entry);
    this.weights.set(entry.slug, weight);
    this.bytes += weight;
    while (this.entries.size > this.maxRooms || (this.bytes > this.maxBytes && this.entries.size > 0)) {
      const oldest = this.entries.keys().next().value as string;
      const evicted = this.entries.get(oldest)!;
      this.uncache(oldest);
      // A room with a turn in flight keeps its actor running: that turn still commits from it.
      if (evicted !== entry && !this.busy(oldest)) evicted.actor.stop();
    }
  }

  /** Forgets a room's cached actor. */
  evict(slug: string): void {
    this.entries.get(slug)?.actor.stop();
    this.uncache(slug);
  }

  /** Puts the actor back to the last committed snapshot (after a rejected or failed command). */
  rebuild(entry: Entry): void {
    // What the failed batch archived was never stored: the restored actor holds those decisions again.
    for (const id of entry.archiving.splice(0)) entry.archived.delete(id);
    const current = JSON.stringify(entry.actor.getPersistedSnapshot());
    if (current === entry.snapshotText) return;
    entry.actor.stop();
    if (entry.snapshotText === '') {
      this.uncache(entry.slug);
      return;
    }
    entry.actor = restoreActor(entry.snapshotText).actor;
  }

  /** Drops a room from the cache and its weight from the total (the actor is the caller's business). */
  private uncache(slug: string): void {
    this.bytes -= this.weights.get(slug) ?? 0;
    this.weights.delete(slug);
    this.entries.delete(slug);
  }
}
