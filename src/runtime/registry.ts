/**
 * The room registry: this process's cache of room actors and the only path by which a room changes
 * (docs/architecture.md, The write path). A small facade over the modules of the write path; a
 * write walks them in one straight line:
 *
 *   execute(slug, spec)
 *     → TurnQueue.submit        the turn joins the room's queue (turn-queue.ts); whatever has queued
 *                               by the time the room is free drains as one batch in its mailbox
 *     → StoreTurn.underLock     the room's lock on a shared store (held-lock.ts), then the cached
 *                               actor brought to the stored version (room-loader.ts, room-cache.ts)
 *     → TurnBatch.run           due work sealed, then each turn in arrival order: authenticate,
 *                               check idempotency, send the command, sign receipts for what it sealed
 *                               (turn-batch.ts, room-steps.ts, idempotent-replay.ts, room-archive.ts)
 *     → StoreTurn.commit        snapshot + events + receipts + idempotency records of the whole batch,
 *                               atomically with a version check, the lock let go with the write
 *     → each caller answered with its own result or refusal, only after that commit.
 *
 * A refused command leaves the actor as it was; a failed batch leaves the stored room untouched and
 * the cached actor is rebuilt from the stored snapshot (RoomCache.rebuild).
 */
import type { RoomCommand } from '../../machines/room.events.js';
import type { RoomInput } from '../../machines/room.machine.js';
import { type ErrorSpec, ProtocolError } from '../errors.js';
import { StoreConflictError } from '../store/port.js';
import type { Clock } from './clock.js';
import { recordOf, replay } from './idempotent-replay.js';
import { RoomCache } from './room-cache.js';
import { newEntry, stateOf } from './room-entry.js';
import { RoomLoader } from './room-loader.js';
import { dueWork, type RoomState } from './room-state.js';
import { type Collected, nothingCollected, send } from './room-steps.js';
import { StoreTurn } from './store-turn.js';
import { TurnBatch } from './turn-batch.js';
import { TurnQueue } from './turn-queue.js';
import type { IdempotencySpec, RuntimeDeps, TurnResult, TurnSpec } from './turn-types.js';

export { idempotencyConflict } from './idempotent-replay.js';
export { DEFAULT_CACHED_BYTES, DEFAULT_CACHED_ROOMS } from './room-cache.js';
export { roomNotFound } from './store-turn.js';
export type { CommitNotice, IdempotencySpec, RuntimeDeps, TurnResult, TurnSpec } from './turn-types.js';
export type { ErrorSpec };

export class RoomRegistry {
  private readonly cache: RoomCache;
  private readonly loader: RoomLoader;
  private readonly queue: TurnQueue;
  private readonly storeTurn: StoreTurn;
  private readonly pendingCreations = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: RuntimeDeps) {
    this.cache = new RoomCache(deps, (slug) => this.queue.busy(slug));
    this.loader = new RoomLoader(deps.store, this.cache);
    this.storeTurn = new StoreTurn(deps, this.cache, this.loader);
    const batch = new TurnBatch(deps, this.cache, this.storeTurn);
    this.queue = new TurnQueue((slug, take) =>
      this.storeTurn.underLock(slug, (entry, lock) => batch.run(entry, take(), lock)),
    );
  }

  get clock(): Clock {
    return this.deps.clock;
  }

  /** Creates a room: the initial actor, then the creator's JOIN and the optional first ASK, in one commit. */
  async create<R>(
    input: RoomInput,
    commands: RoomCommand[],
    render: (infos: Record<string, unknown>[], state: RoomState) => R,
    idempotency?: IdempotencySpec,
  ): Promise<TurnResult<R>> {
    if (idempotency) {
      const inFlight = this.pendingCreations.get(idempotency.scope);
      if (inFlight) await inFlight.catch(() => undefined);
      const stored = await replay(this.deps.store, this.deps.clock, idempotency);
      if (stored) return stored as TurnResult<R>;
    }
    const work = this.createRoom(input, commands, render, idempotency);
    if (idempotency) {
      this.pendingCreations.set(idempotency.scope, work);
      void work.finally(() => this.pendingCreations.delete(idempotency.scope)).catch(() => undefined);
    }
    return work;
  }

  private async createRoom<R>(
    input: RoomInput,
    commands: RoomCommand[],
    render: (infos: Record<string, unknown>[], state: RoomState) => R,
    idempotency?: IdempotencySpec,
  ): Promise<TurnResult<R>> {
    const entry = newEntry(input);
    const infos: Record<string, unknown>[] = [];
    const collected: Collected = nothingCollected();
    for (const command of commands) {
      const result = send(entry, command, this.deps);
      const reply = result.reply;
      if (reply?.type !== 'reply') throw new Error(`room creation: no reply to ${command.type}`);
      if (!reply.ok) throw new ProtocolError(reply.error);
      infos.push(reply.info);
      collected.drafts.push(...result.drafts);
      collected.receipts.push(...result.receipts);
    }
    const result = render(infos, stateOf(entry, collected.drafts.length));
    const now = this.deps.clock.now();
    const records = idempotency ? [recordOf(idempotency, result, now)] : [];
    await this.storeTurn.commit(entry, collected, records);
    this.cache.remember(entry);
    return { result, replayed: false };
  }

  /** Runs one command against a room (see the module comment). */
  async execute<R>(slug: string, spec: TurnSpec<R>): Promise<TurnResult<R>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.queue.submit(slug, spec);
      } catch (error) {
        if (error instanceof StoreConflictError) this.deps.onConflict?.();
        if (error instanceof StoreConflictError && attempt < 2) continue;
        throw error;
      }
    }
  }

  /** Seals what time has made due, without a command (deadline timers call this). */
  async tick(slug: string): Promise<void> {
    await this.execute(slug, { prepare: () => ({ command: null }), render: () => undefined });
  }

  /**
   * The committed state for a read. Seals what is due first (through a turn), so no read ever
   * presents an expired decision as open. Returns null for an unknown room.
   */
  async read(slug: string): Promise<RoomState | null> {
    const entry = await this.loader.fresh(slug);
    if (!entry) return null;
    const state = entry.committed;
    if (dueWork(state, this.deps.clock.now()) === null) return state;
    await this.tick(slug);
    const after = await this.loader.fresh(slug);
    return after ? after.committed : null;
  }

  async exists(slug: string): Promise<boolean> {
    if (this.cache.has(slug) && this.deps.store.kind === 'sqlite') return true;
    return this.deps.store.roomExists(slug);
  }

  /** Deletes a room for good (its slug stays reserved). */
  async remove(slug: string): Promise<void> {
    await this.queue.exclusive(slug, async () => {
      const lock = await this.storeTurn.lock(slug);
      try {
        await this.deps.store.deleteRoom(slug);
        this.evict(slug);
        this.deps.onRemove?.(slug);
      } finally {
        await lock?.release();
      }
    });
  }

  /** Forgets a room's cached actor. */
  evict(slug: string): void {
    this.cache.evict(slug);
  }

  async drain(): Promise<void> {
    await this.queue.drain();
  }

  /** Room actors held in this process. */
  get cachedRooms(): number {
    return this.cache.size;
  }

  /** Their weight together (RoomCache), held under maxCachedBytes. */
  get cachedBytes(): number {
    return this.cache.weight;
  }
}
