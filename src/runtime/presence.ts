/**
 * When each member last read its room (`last_seen_at`, shown only when a room enables
 * read_receipts). Kept in this process's memory on purpose: it changes on every read, and making
 * every read a durable write would cost more than the hint is worth. After a restart, or on another
 * process, a member shows as unseen until its next read.
 */
import { LRUCache } from 'lru-cache';

export class Presence {
  private readonly seen: LRUCache<string, Map<string, number>>;

  /** Rooms remembered at most, least recently read forgotten first (their members show as unseen). */
  constructor(maxRooms = 10_000) {
    this.seen = new LRUCache({ max: maxRooms });
  }

  mark(slug: string, participantId: string, at: number): void {
    let room = this.seen.get(slug);
    if (!room) {
      room = new Map();
      this.seen.set(slug, room);
    }
    room.set(participantId, at);
  }

  /** A look that does not count as a read of the room (only marks keep a room remembered). */
  lastSeen(slug: string, participantId: string): number | null {
    return this.seen.peek(slug)?.get(participantId) ?? null;
  }

  forget(slug: string): void {
    this.seen.delete(slug);
  }
}
