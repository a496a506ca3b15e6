/**
 * The per-room turn queue (docs/architecture.md, The write path): turns queue per room, and
 * whatever has queued by the time the room is free runs as one batch in the room's mailbox (one
 * batch at a time per room, rooms in parallel). Each turn is answered with its own outcome.
 */
import { Mailbox } from './mailbox.js';
import type { TurnResult, TurnSpec } from './turn-types.js';

/** A turn waiting in a room's queue for the batch that will run it. */
export interface QueuedTurn {
  spec: TurnSpec<unknown>;
  resolve(result: TurnResult<unknown>): void;
  reject(error: unknown): void;
}

export type TurnOutcome = { ok: TurnResult<unknown> } | { error: unknown };

/**
 * Runs the room's batch: `take` hands over the turns queued so far, to be called once the batch may
 * start (for a shared store: once the lock is held). One outcome per turn taken, in order.
 */
export type RunBatch = (slug: string, take: () => QueuedTurn[]) => Promise<TurnOutcome[]>;

export class TurnQueue {
  private readonly mailbox = new Mailbox();
  /** Turns queued per room that no batch has taken yet. */
  private readonly queues = new Map<string, QueuedTurn[]>();

  constructor(private readonly runBatch: RunBatch) {}

  /** Queues a turn; it is answered when the batch that takes it has committed (or failed). */
  submit<R>(slug: string, spec: TurnSpec<R>): Promise<TurnResult<R>> {
    return new Promise((resolve, reject) => {
      const queued = { spec, resolve, reject } as QueuedTurn;
      const queue = this.queues.get(slug);
      if (queue) {
        queue.push(queued);
        return;
      }
      this.queues.set(slug, [queued]);
      void this.mailbox.run(slug, () => this.drainQueue(slug));
    });
  }

  /** Runs a task of its own in the room's mailbox, between batches (a deletion). */
  exclusive<T>(slug: string, task: () => Promise<T>): Promise<T> {
    return this.mailbox.run(slug, task);
  }

  /** Whether the room has turns queued or a task running. */
  busy(slug: string): boolean {
    return this.queues.has(slug) || this.mailbox.active(slug);
  }

  /** Resolves when every task queued so far has settled. */
  drain(): Promise<void> {
    return this.mailbox.drain();
  }

  /**
   * Runs every turn queued for the room as one batch (one lock, one commit). The batch is taken once
   * the lock is held, not before: turns that queued while this process waited for the lock (behind
   * other processes writing the room) ride along, instead of waiting for the lock a second time.
   */
  private async drainQueue(slug: string): Promise<void> {
    const waitedFor = this.queues.get(slug)?.length ?? 0;
    const drained: { batch?: QueuedTurn[] } = {};
    const take = () => {
      drained.batch = this.queues.get(slug) ?? [];
      this.queues.delete(slug);
      return drained.batch;
    };
    let outcomes: TurnOutcome[];
    try {
      outcomes = await this.runBatch(slug, take);
    } catch (error) {
      // Failed before the batch was taken (the lock wait ran out, or no room): the turns this drain
      // was started for fail; those that queued meanwhile get a drain of their own.
      drained.batch ??= this.takeFirst(slug, waitedFor);
      outcomes = drained.batch.map(() => ({ error }));
    }
    const batch = drained.batch ?? [];
    batch.forEach((turn, i) => {
      const outcome = outcomes[i]!;
      if ('ok' in outcome) turn.resolve(outcome.ok);
      else turn.reject(outcome.error);
    });
  }

  /** Takes the room's first `count` queued turns; a drain is started for any left behind. */
  private takeFirst(slug: string, count: number): QueuedTurn[] {
    const queue = this.queues.get(slug) ?? [];
    const taken = queue.splice(0, count);
    if (queue.length === 0) this.queues.delete(slug);
    else void this.mailbox.run(slug, () => this.drainQueue(slug));
    return taken;
  }
}
