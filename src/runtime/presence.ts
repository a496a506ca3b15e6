/**
 * When each member last read its room (`last_seen_at`, shown only when a room enables
 * read_receipts). Kept in this process's memory on purpose: it changes on every read, and making
 * every read a durable write would cost more than the hint is worth. After a restart, or on another
 * process, a member shows as unseen until its next read.
 */
export class Presence {
  private readonly seen = new Map<string, Map<string, number>>();

  /** Rooms remembered at most, least recently read forgotten first (their members show as unseen). */
  constructor(private readonly maxRooms = 10_000) {}

  mark(slug: string, participantId: string, at: number): void {
    let room = this.seen.get(slug);
    if (room) this.seen.delete(slug);
    else room = new Map();
    this.seen.set(slug, room);
    room.set(participantId, at);
    if (this.seen.size > this.maxRooms) this.seen.delete(this.seen.keys().next().value!);
  }

  lastSeen(slug: string, participantId: string): number | null {
    return this.seen.get(slug)?.get(participantId) ?? null;
  }

  forget(slug: string): void {
    this.seen.delete(slug);
  }
}
