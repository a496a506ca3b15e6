/**
 * In-process fan-out of commit notices: long-poll groups and SSE streams listen per room, and the
 * commit path (local commits, and remote ones arriving over Redis) notifies. Nothing polls.
 */
export type CommitListener = (head: number) => void;

export class CommitBus {
  private readonly rooms = new Map<string, Set<CommitListener>>();

  /** Starts listening to a room's commits; returns the function that stops it. */
  listen(slug: string, listener: CommitListener): () => void {
    let listeners = this.rooms.get(slug);
    if (!listeners) {
      listeners = new Set();
      this.rooms.set(slug, listeners);
    }
    listeners.add(listener);
    return () => {
      const current = this.rooms.get(slug);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.rooms.delete(slug);
    };
  }

  notify(slug: string, head: number): void {
    const listeners = this.rooms.get(slug);
    if (!listeners) return;
    for (const listener of [...listeners]) listener(head);
  }

  /** Whether anyone in this process listens to the room. */
  has(slug: string): boolean {
    return this.rooms.has(slug);
  }
}
