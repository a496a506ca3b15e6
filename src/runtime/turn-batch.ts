/**
 * A batch of turns applied to a room (docs/architecture.md, The write path): what time made due
 * first, then each turn in arrival order — prepare, idempotency, command, render — and one commit
 * of everything the batch collected. A refused turn leaves the actor as it was; a turn that fails
 * outside the protocol restarts the batch without it.
 */
import type { AnyActorRef } from 'xstate';
import { ProtocolError } from '../errors.js';
import type { IdempotencyRecord } from '../store/port.js';
import { archiveResolved } from './room-archive.js';
import type { RoomCache } from './room-cache.js';
import { type Entry, type RoomActor, stateOf } from './room-entry.js';
import { advance, type Collected, send } from './room-steps.js';
import { recordOf, replay, replayOf } from './idempotent-replay.js';
import type { HeldLock } from './held-lock.js';
import type { StoreTurn } from './store-turn.js';
import type { RuntimeDeps, TurnResult, TurnSpec } from './turn-types.js';
import type { QueuedTurn, TurnOutcome } from './turn-queue.js';

/** A batch must start over without one of its turns (see run). */
class BatchRestart extends Error {
  constructor(
    readonly index: number,
    readonly failure: unknown,
  ) {
    super('batch restart');
  }
}

export class TurnBatch {
  constructor(
    private readonly deps: RuntimeDeps,
    private readonly cache: RoomCache,
    private readonly storeTurn: StoreTurn,
  ) {}

  /**
   * Applies a batch of turns to the actor in order and commits once. A turn that fails outside the
   * protocol (the machine threw), or whose refusal unexpectedly moved the actor, restarts the batch
   * from the committed snapshot without it, so it cannot disturb the others.
   */
  async run(entry: Entry, batch: QueuedTurn[], lock: HeldLock | null): Promise<TurnOutcome[]> {
    const failed = new Map<number, unknown>();
    for (;;) {
      try {
        return await this.apply(entry, batch, failed, lock);
      } catch (error) {
        if (!(error instanceof BatchRestart)) throw error;
        failed.set(error.index, error.failure);
        this.cache.rebuild(entry);
      }
    }
  }

  private async apply(
    entry: Entry,
    batch: QueuedTurn[],
    failed: Map<number, unknown>,
    lock: HeldLock | null,
  ): Promise<TurnOutcome[]> {
    const now = this.deps.clock.now();
    const collected = advance(entry, now, this.deps);
    const records: IdempotencyRecord[] = [];
    const outcomes: TurnOutcome[] = [];
    for (const [index, turn] of batch.entries()) {
      if (failed.has(index)) {
        outcomes.push({ error: failed.get(index) });
        continue;
      }
      try {
        outcomes.push({ ok: await this.applyTurn(entry, turn.spec, now, collected, records) });
      } catch (error) {
        if (error instanceof BatchRestart) throw new BatchRestart(index, error.failure);
        outcomes.push({ error });
      }
    }
    archiveResolved(entry, collected.archived);
    if (
      collected.drafts.length > 0 ||
      collected.receipts.length > 0 ||
      records.length > 0 ||
      collected.archived.length > 0 ||
      entry.stale
    ) {
      const started = performance.now();
      await this.storeTurn.commit(entry, collected, records, lock);
      this.deps.onBatch?.(batch.length, (performance.now() - started) / 1000);
    } else {
      this.deps.onBatch?.(batch.length, null);
    }
    return outcomes;
  }

  /** One turn of a batch: its events and receipts join `collected`, its idempotency record `records`. */
  private async applyTurn(
    entry: Entry,
    spec: TurnSpec<unknown>,
    now: number,
    collected: Collected,
    records: IdempotencyRecord[],
  ): Promise<TurnResult<unknown>> {
    const state = stateOf(entry, collected.drafts.length);
    const { command, idempotency } = spec.prepare(state, now);
    if (idempotency) {
      const earlier = records.find((record) => record.scope === idempotency.scope);
      const stored = earlier
        ? replayOf(earlier, idempotency)
        : await replay(this.deps.store, this.deps.clock, idempotency);
      if (stored) return stored;
    }
    if (command === null) return { result: spec.render({}, state), replayed: false };

    const before = actorMarks(entry.actor);
    let step: Collected;
    try {
      step = send(entry, command, this.deps);
    } catch (error) {
      throw new BatchRestart(-1, error);
    }
    const reply = step.reply;
    if (reply?.type !== 'reply')
      throw new BatchRestart(-1, new Error(`room ${entry.slug}: no reply to ${command.type}`));
    if (!reply.ok) {
      const refusal = new ProtocolError(reply.error);
      if (!sameMarks(before, actorMarks(entry.actor))) throw new BatchRestart(-1, refusal);
      throw refusal;
    }
    collected.drafts.push(...step.drafts);
    collected.receipts.push(...step.receipts);
    // A change without an event (a seat recovery rotates the token and supersedes the old one) must
    // still be committed: otherwise it lives only in this process's cache, other processes keep
    // accepting the superseded token, and parked connections are never told (docs/architecture.md).
    if (step.drafts.length === 0 && !sameMarks(before, actorMarks(entry.actor))) entry.stale = true;
    const result = spec.render(reply.info, stateOf(entry, collected.drafts.length));
    if (idempotency) records.push(recordOf(idempotency, result, now));
    return { result, replayed: false };
  }
}

/**
 * What changes when the actor moves: the room's and every decision's context object and state
 * value. XState replaces a context only on assign, so equal marks mean a refusal moved nothing,
 * checked without serialising the room.
 */
function actorMarks(actor: RoomActor): unknown[] {
  const snapshot = actor.getSnapshot();
  const marks: unknown[] = [snapshot.context, JSON.stringify(snapshot.value), snapshot.status];
  for (const child of Object.values(snapshot.children as Record<string, AnyActorRef | undefined>)) {
    const childSnapshot = child?.getSnapshot();
    marks.push(childSnapshot?.context, JSON.stringify(childSnapshot?.value));
  }
  return marks;
}

function sameMarks(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((mark, i) => mark === b[i]);
}
