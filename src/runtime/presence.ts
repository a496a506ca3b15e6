/**
 * When each member last read its room (`last_seen_at`, shown only when a room enables
 * read_receipts). Kept in this process's memory on purpose: it changes on every read, and making
 * every read a durable write would cost more than the hint is worth. After a restart, or on another
 * process, a member shows as unseen until its next read.
 */
export class Presence {
  private readonly seen = new Map<string, Map<string, number>>();

  mark(slug: string, participantId: string, at: number): void {
    let room = this.seen.get(slug);
    if (!room) {
      room = new Map();
      this.seen.set(slug, room);
    }
    room.set(participantId, at);
  }

  lastSeen(slug: string, participantId: string): number | null {
    return this.seen.get(slug)?.get(participantId) ?? null;
  }

  forget(slug: string): void {
    this.seen.delete(slug);
  }
}
