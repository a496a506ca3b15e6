/**
 * In-process fan-out of commit notices: long-poll groups and SSE streams listen per room, and the
 * commit path (local commits, and remote ones arriving over Redis) notifies. Nothing polls. A notice
 * says only "read the room again": listeners evaluate the committed state, never the message.
 */
export type CommitListener = () => void;

/** Told when a room gets its first listener and loses its last (redis-fanout.ts subscribes then). */
export interface RoomInterest {
  want(slug: string): void;
  release(slug: string): void;
}

export class CommitBus {
  private readonly rooms = new Map<string, Set<CommitListener>>();
  private interest: RoomInterest | null = null;

  /** Starts listening to a room's commits; returns the function that stops it. */
  listen(slug: string, listener: CommitListener): () => void {
    let listeners = this.rooms.get(slug);
    if (!listeners) {
      listeners = new Set();
      this.rooms.set(slug, listeners);
      this.interest?.want(slug);
    }
    listeners.add(listener);
    return () => {
      const current = this.rooms.get(slug);
      if (!current?.delete(listener)) return;
      if (current.size === 0) {
        this.rooms.delete(slug);
        this.interest?.release(slug);
      }
    };
  }

  /** From now on `interest` hears which rooms are listened to, starting with those already are. */
  watchRooms(interest: RoomInterest | null): void {
    this.interest = interest;
    if (interest) for (const slug of this.rooms.keys()) interest.want(slug);
  }

  notify(slug: string): void {
    const listeners = this.rooms.get(slug);
    if (!listeners) return;
    for (const listener of [...listeners]) listener();
  }

  /** Whether anyone in this process listens to the room. */
  has(slug: string): boolean {
    return this.rooms.has(slug);
  }
}
