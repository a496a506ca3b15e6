/**
 * Per-key serialisation: one task at a time per room, rooms in parallel. Tasks for a key run in
 * arrival order; a failing task does not block the ones after it.
 */
export class Mailbox {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Whether the key has queued or running work. */
  active(key: string): boolean {
    return this.tails.has(key);
  }

  /** Number of keys with queued or running work (for shutdown and metrics). */
  get busy(): number {
    return this.tails.size;
  }

  /** Resolves when every task queued so far has settled. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled([...this.tails.values()]);
  }
}
