/**
 * The room registry: this process's cache of room actors and the only path by which a room changes.
 *
 * Turns (one command each) queue in the room's mailbox. Whatever has queued by the time the room is
 * free is drained as one batch, under the room's lock when the store is shared: bring the cached
 * actor to the stored version, seal what time has made due, then for each turn in arrival order
 * authenticate, check idempotency, send the command and sign receipts for what it sealed; finally
 * commit snapshot + events + receipts + idempotency records of the whole batch atomically with a
 * version check. Only after that commit does any caller get its answer, each its own result or
 * refusal. A refused command leaves the actor as it was; a failed batch leaves the stored room
 * untouched and the cached actor is rebuilt from the stored snapshot.
 */
import { isSealedBody, type ResponseSeal } from './idempotency-seal.js';
import { randomUUID } from 'node:crypto';
import { type AnyActorRef, type Snapshot, type Actor as XActor, createActor } from 'xstate';
import type { RoomEmitted } from '../../machines/room.events.js';
import type { RoomCommand } from '../../machines/room.events.js';
import { decisionPhase } from '../../machines/decision.machine.js';
import { type RoomInput, roomMachine } from '../../machines/room.machine.js';
import type { DecisionData, EventDraft } from '../domain/types.js';
import { type ErrorSpec, ProtocolError, protocolError } from '../errors.js';
import type { Keyring } from '../receipts/index.js';
import {
  type ArchivedDecision,
  type IdempotencyRecord,
  type RoomLock,
  type RoomRecord,
  type RoomStore,
  StoreConflictError,
  type StoredEvent,
  type StoredReceipt,
} from '../store/port.js';
import { isAtVersion } from '../store/common.js';
import { iso } from '../domain/format.js';
import type { Clock } from './clock.js';
import { decisionById, dueWork, type RoomState, roomDeadline, roomStateOf } from './room-state.js';
import { signConclusionReceipt, signDecisionReceipt } from './sealing.js';
import { Mailbox } from './mailbox.js';
import { SharedRefresh } from './shared-refresh.js';
import { readSnapshot } from './snapshot-format.js';

type RoomActor = XActor<typeof roomMachine>;

interface Entry {
  slug: string;
  actor: RoomActor;
  version: number;
  /** The store's revision of that version (Redis), so a divergent history at the same count is caught. */
  revision: string | undefined;
  head: number;
  /** The snapshot text last committed; the actor is rebuilt from it after a rejected command. */
  snapshotText: string;
  /** Resolved decisions that left the actor for append-only storage, by id. */
  archived: Map<string, DecisionData>;
  /** Ids archived by the batch being committed: forgotten again if that commit fails. */
  archiving: string[];
  /** The stored snapshot is in an older shape, or behind an eventless change: the next batch commits. */
  stale: boolean;
  /** Characters of the archived decisions' stored JSON (part of the cache weight, see weightOf). */
  archivedChars: number;
  /**
   * The read model of the last committed version, built when it was committed or loaded. Reads
   * answer from it, never from the actor, which a running batch moves before it commits and a
   * rebuild replaces (docs/architecture.md, "One room, many readers").
   */
  committed: RoomState;
}

export interface IdempotencySpec {
  scope: string;
  /** The request fingerprint, keyed by the seal (it may contain a password or an invite). */
  fingerprint: string;
  /** Seals the stored response so that only this scope's client can open it (idempotency-seal.ts). */
  seal: ResponseSeal;
}

export interface TurnSpec<R> {
  /** Authenticates against the current state and builds the command; throws ProtocolError to refuse. */
  prepare(state: RoomState, now: number): { command: RoomCommand | null; idempotency?: IdempotencySpec | undefined };
  /** Builds the response from the machine's reply and the state after the command (before commit). */
  render(info: Record<string, unknown>, state: RoomState): R;
}

export interface TurnResult<R> {
  result: R;
  replayed: boolean;
}

export interface CommitNotice {
  slug: string;
  head: number;
  events: StoredEvent[];
  nextDeadline: number | null;
  /** The room's first commit (its creation). */
  created: boolean;
  /** Receipts signed in this commit. */
  receipts: number;
  /** The state committed (the metrics read mechanisms and outcomes from it). */
  state: RoomState;
}

export interface RuntimeDeps {
  store: RoomStore;
  clock: Clock;
  keyring: Keyring;
  /** The public base URL (a function: tests learn the port only after listening). */
  baseUrl: () => string;
  /** Called after every commit: wake waiters, push streams, enqueue webhooks, arm timers. */
  onCommit?: (notice: CommitNotice) => void;
  /** Called after every batch: its turns, and how long its commit took (null when nothing was written). */
  onBatch?: (turns: number, commitSeconds: number | null) => void;
  /** After each wait for a room lock: how long, and whether it was taken (false: gave up, 503). */
  onLock?: (waitSeconds: number, acquired: boolean) => void;
  /** A commit refused by the version check or the fence; the turn runs again on fresh state. */
  onConflict?: () => void;
  /** A room deleted for good. */
  onRemove?: (slug: string) => void;
  maxCachedRooms?: number;
  /**
   * What the cached room actors may weigh together (weightOf: an estimate of their resident bytes).
   * The least recently used are evicted past it, so a few huge rooms cannot take the process's memory.
   */
  maxCachedBytes?: number;
}

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

interface Collected {
  reply: RoomEmitted | null;
  drafts: EventDraft[];
  receipts: StoredReceipt[];
  archived: ArchivedDecision[];
}

const nothingCollected = (): Collected => ({ reply: null, drafts: [], receipts: [], archived: [] });

/** A turn waiting in a room's queue for the batch that will run it. */
interface QueuedTurn {
  spec: TurnSpec<unknown>;
  resolve(result: TurnResult<unknown>): void;
  reject(error: unknown): void;
}

type TurnOutcome = { ok: TurnResult<unknown> } | { error: unknown };

/** A batch must start over without one of its turns (see runBatch). */
class BatchRestart extends Error {
  constructor(
    readonly index: number,
    readonly failure: unknown,
  ) {
    super('batch restart');
  }
}

/**
 * A room lock lives 1.5 s and is renewed while its turn runs (keptAlive): a process that dies holding
 * it costs its rooms at most 1.5 s. A request waits at most 3 s for a busy room, then answers 503.
 */
const LOCK_TTL_MS = 1_500;
const LOCK_WAIT_MS = 3_000;
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export class RoomRegistry {
  /** Least recently used first (Map order). */
  private readonly cache = new Map<string, Entry>();
  /** Each cached room's weight as it was counted into `bytes` (a room grows between weighings). */
  private readonly weights = new Map<string, number>();
  private bytes = 0;
  private readonly mailbox = new Mailbox();
  /** Turns queued per room that no batch has taken yet. */
  private readonly queues = new Map<string, QueuedTurn[]>();
  private readonly pendingCreations = new Map<string, Promise<unknown>>();
  /** Loads of a room from a shared store: one at a time per room, shared by whoever asks meanwhile. */
  private readonly refreshes = new SharedRefresh<Entry | null>();

  constructor(private readonly deps: RuntimeDeps) {}

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
      const stored = await this.replay(idempotency);
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
    const actor = createActor(roomMachine, { input });
    actor.start();
    const entry: Entry = {
      slug: input.slug,
      actor,
      version: 0,
      revision: undefined,
      head: 0,
      snapshotText: '',
      archived: new Map(),
      archiving: [],
      stale: false,
      archivedChars: 0,
      committed: roomStateOf(actor.getSnapshot(), 0, 0),
    };
    const infos: Record<string, unknown>[] = [];
    const collected: Collected = nothingCollected();
    for (const command of commands) {
      const result = this.send(entry, command);
      const reply = result.reply;
      if (reply?.type !== 'reply') throw new Error(`room creation: no reply to ${command.type}`);
      if (!reply.ok) throw new ProtocolError(reply.error);
      infos.push(reply.info);
      collected.drafts.push(...result.drafts);
      collected.receipts.push(...result.receipts);
    }
    const result = render(infos, this.state(entry, collected.drafts.length));
    const now = this.deps.clock.now();
    const records = idempotency ? [recordOf(idempotency, result, now)] : [];
    await this.commit(entry, collected, records);
    this.remember(entry);
    return { result, replayed: false };
  }

  /** Runs one command against a room (see the class comment). */
  async execute<R>(slug: string, spec: TurnSpec<R>): Promise<TurnResult<R>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.turn(slug, spec);
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
    const entry = await this.freshEntry(slug);
    if (!entry) return null;
    const state = entry.committed;
    if (dueWork(state, this.deps.clock.now()) === null) return state;
    await this.tick(slug);
    const after = await this.freshEntry(slug);
    return after ? after.committed : null;
  }

  async exists(slug: string): Promise<boolean> {
    if (this.cache.has(slug) && this.deps.store.kind === 'sqlite') return true;
    return this.deps.store.roomExists(slug);
  }

  /** Deletes a room for good (its slug stays reserved). */
  async remove(slug: string): Promise<void> {
    await this.mailbox.run(slug, async () => {
      const lock = await this.lockFor(slug);
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
    this.cache.get(slug)?.actor.stop();
    this.uncache(slug);
  }

  async drain(): Promise<void> {
    await this.mailbox.drain();
  }

  /** Room actors held in this process. */
  get cachedRooms(): number {
    return this.cache.size;
  }

  /** Their weight together (weightOf), held under maxCachedBytes. */
  get cachedBytes(): number {
    return this.bytes;
  }

  private turn<R>(slug: string, spec: TurnSpec<R>): Promise<TurnResult<R>> {
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
      outcomes = await this.underLock(slug, (entry, lock) => this.runBatch(entry, take(), lock));
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

  private async underLock<T>(slug: string, work: (entry: Entry, lock: HeldLock | null) => Promise<T>): Promise<T> {
    const lock = await this.lockFor(slug);
    try {
      const entry = this.currentUnder(slug, lock) ?? (await this.entryUnder(slug, lock));
      if (!entry) throw roomNotFound(slug);
      try {
        return await work(entry, lock);
      } catch (error) {
        this.rebuild(entry);
        throw error;
      }
    } finally {
      // A commit let the lock go with its write (release_lock); otherwise (nothing to commit, or a
      // refused commit) it is released here, not awaited: the batch's answers need not wait one more
      // round trip, and the release is compare-and-delete (it never frees a lock taken since).
      void lock?.release();
    }
  }

  /**
   * The cached entry when the lock, read in its own round trip, found the room at the entry's
   * version and revision: nobody else commits while the lock is held, so the entry is current and
   * needs no load. Null otherwise (no lock read, another process wrote, or nothing cached): load it.
   */
  private currentUnder(slug: string, lock: RoomLock | null): Entry | null {
    const cached = this.cache.get(slug);
    if (!cached || !lock?.found) return null;
    return isAtVersion(lock.found, cached) ? cached : null;
  }

  /**
   * The room brought to the stored version under the lock. When the lock's own round trip brought
   * the room along (`loaded`: the store held something other than the cache) it is installed from
   * that, with no further read: nobody else commits while the lock is held. Otherwise it is loaded.
   */
  private entryUnder(slug: string, lock: RoomLock | null): Promise<Entry | null> {
    if (lock?.loaded === undefined) return this.freshEntry(slug);
    const loaded = lock.loaded;
    return this.refresh(slug, false, async () => loaded);
  }

  /**
   * Applies a batch of turns to the actor in order and commits once. A turn that fails outside the
   * protocol (the machine threw), or whose refusal unexpectedly moved the actor, restarts the batch
   * from the committed snapshot without it, so it cannot disturb the others.
   */
  private async runBatch(entry: Entry, batch: QueuedTurn[], lock: HeldLock | null): Promise<TurnOutcome[]> {
    const failed = new Map<number, unknown>();
    for (;;) {
      try {
        return await this.applyBatch(entry, batch, failed, lock);
      } catch (error) {
        if (!(error instanceof BatchRestart)) throw error;
        failed.set(error.index, error.failure);
        this.rebuild(entry);
      }
    }
  }

  private async applyBatch(
    entry: Entry,
    batch: QueuedTurn[],
    failed: Map<number, unknown>,
    lock: HeldLock | null,
  ): Promise<TurnOutcome[]> {
    const now = this.deps.clock.now();
    const collected = this.advance(entry, now);
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
    this.archiveResolved(entry, collected);
    if (
      collected.drafts.length > 0 ||
      collected.receipts.length > 0 ||
      records.length > 0 ||
      collected.archived.length > 0 ||
      entry.stale
    ) {
      const started = performance.now();
      await this.commit(entry, collected, records, lock);
      this.deps.onBatch?.(batch.length, (performance.now() - started) / 1000);
    } else {
      this.deps.onBatch?.(batch.length, null);
    }
    return outcomes;
  }

  /**
   * Moves resolved decisions (receipt signed) out of the actor: their data joins the commit as
   * archived decisions and stays beside the actor for reads. Snapshots written before archiving
   * existed carry resolved decisions as children; the first batch on them archives those too.
   */
  private archiveResolved(entry: Entry, collected: Collected): void {
    const children = entry.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>;
    for (const [id, child] of Object.entries(children)) {
      const snapshot = child?.getSnapshot() as { value: unknown; context: DecisionData } | undefined;
      if (!snapshot || decisionPhase(snapshot.value) !== 'resolved') continue;
      collected.archived.push({ decision_id: id, seq: snapshot.context.seq, data: JSON.stringify(snapshot.context) });
      entry.archived.set(id, snapshot.context);
      entry.archivedChars += collected.archived.at(-1)!.data.length;
      entry.archiving.push(id);
      entry.actor.send({ type: 'ARCHIVE', decisionId: id });
    }
  }

  /** One turn of a batch: its events and receipts join `collected`, its idempotency record `records`. */
  private async applyTurn(
    entry: Entry,
    spec: TurnSpec<unknown>,
    now: number,
    collected: Collected,
    records: IdempotencyRecord[],
  ): Promise<TurnResult<unknown>> {
    const state = this.state(entry, collected.drafts.length);
    const { command, idempotency } = spec.prepare(state, now);
    if (idempotency) {
      const earlier = records.find((record) => record.scope === idempotency.scope);
      const stored = earlier ? replayOf(earlier, idempotency) : await this.replay(idempotency);
      if (stored) return stored;
    }
    if (command === null) return { result: spec.render({}, state), replayed: false };

    const before = actorMarks(entry.actor);
    let step: Collected;
    try {
      step = this.send(entry, command);
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
    const result = spec.render(reply.info, this.state(entry, collected.drafts.length));
    if (idempotency) records.push(recordOf(idempotency, result, now));
    return { result, replayed: false };
  }

  private async replay(idempotency: IdempotencySpec): Promise<TurnResult<unknown> | null> {
    const record = await this.deps.store.idempotency(idempotency.scope);
    if (!record || this.deps.clock.now() - record.created_at > IDEMPOTENCY_TTL_MS) return null;
    return replayOf(record, idempotency);
  }

  /** Sends what time made due (ADVANCE, ROSTER_CHECK) in instant order, ties by seq, until nothing is due. */
  private advance(entry: Entry, now: number): Collected {
    const total: Collected = nothingCollected();
    for (let guard = 0; guard < 1000; guard++) {
      const due = dueWork(this.state(entry), now);
      if (!due) break;
      const before = JSON.stringify(entry.actor.getPersistedSnapshot());
      const step = this.send(
        entry,
        due.kind === 'roster'
          ? { type: 'ROSTER_CHECK', now: due.at }
          : { type: 'ADVANCE', decisionId: due.id, now: due.at },
      );
      total.drafts.push(...step.drafts);
      total.receipts.push(...step.receipts);
      if (JSON.stringify(entry.actor.getPersistedSnapshot()) === before) {
        throw new Error(`room ${entry.slug}: ${due.kind} work due at ${iso(due.at)} did not advance`);
      }
    }
    return total;
  }

  /** Sends one event and everything it causes: receipts are signed in seal order and fed back. */
  private send(entry: Entry, event: Parameters<RoomActor['send']>[0]): Collected {
    const collected: Collected = nothingCollected();
    const queue: RoomEmitted[] = [];
    const subscription = entry.actor.on('*', (emitted) => {
      const e = emitted as RoomEmitted;
      if (e.type === 'reply') collected.reply ??= e;
      else if (e.type === 'event') collected.drafts.push(e.draft);
      else queue.push(e);
    });
    try {
      entry.actor.send(event);
      while (queue.length > 0) {
        const next = queue.shift()!;
        const state = this.state(entry);
        if (next.type === 'seal') {
          const decision = decisionById(state, next.decisionId);
          if (!decision) throw new Error(`sealed decision ${next.decisionId} not found`);
          const receipt = signDecisionReceipt(state, decision, this.deps.keyring, this.deps.baseUrl());
          collected.receipts.push(receipt);
          entry.actor.send({ type: 'RECEIPT_SIGNED', decisionId: next.decisionId, link: linkOf(receipt, state) });
        } else if (next.type === 'conclude') {
          const receipt = signConclusionReceipt(state, this.deps.keyring, this.deps.baseUrl());
          collected.receipts.push(receipt);
          entry.actor.send({ type: 'RECEIPT_SIGNED', decisionId: null, link: linkOf(receipt, state) });
        }
      }
    } finally {
      subscription.unsubscribe();
    }
    const error = entry.actor.getSnapshot().error;
    if (error) throw error;
    return collected;
  }

  private async commit(
    entry: Entry,
    collected: Collected,
    records: IdempotencyRecord[],
    lock: HeldLock | null = null,
  ): Promise<void> {
    const events: StoredEvent[] = collected.drafts.map((draft, i) => ({
      id: randomUUID(),
      seq: entry.head + 1 + i,
      event_type: draft.event_type,
      occurred_at: iso(draft.occurred_at),
      decision_id: draft.decision_id,
      data: draft.data,
      actor: draft.actor,
    }));
    const snapshotText = JSON.stringify(entry.actor.getPersistedSnapshot());
    const state = this.state(entry);
    const nextDeadline = roomDeadline(state);
    const created = entry.version === 0;
    const stored: RoomRecord = await this.deps.store.commit({
      slug: entry.slug,
      expected_version: entry.version,
      snapshot: snapshotText,
      events,
      receipts: collected.receipts,
      ...(collected.archived.length > 0 ? { archived: collected.archived } : {}),
      ...(records.length > 0 ? { idempotency: records } : {}),
      next_deadline: nextDeadline,
      // The commit lets the lock go itself and wakes the next waiter: one round trip fewer
      // between this batch's write and the next holder's (docs/architecture.md, "One room, many processes").
      ...(lock ? { fence: lock.token, release_lock: true } : {}),
      ...(entry.revision !== undefined ? { expected_revision: entry.revision } : {}),
    });
    lock?.releasedByCommit();
    entry.version = stored.version;
    entry.revision = stored.revision;
    entry.archiving = [];
    entry.head = stored.head;
    entry.snapshotText = snapshotText;
    entry.stale = false;
    entry.committed = { ...state, version: stored.version, head: stored.head };
    // The room may have grown: weigh it again (and make room for it). A cached twin loaded while this
    // entry was evicted mid-turn is now behind the store: this entry replaces it.
    if (this.cache.has(entry.slug)) this.remember(entry);
    this.deps.onCommit?.({
      slug: entry.slug,
      head: stored.head,
      events,
      nextDeadline,
      created,
      receipts: collected.receipts.length,
      state: entry.committed,
    });
  }

  /** `pendingEvents`: events about to be committed, so a rendered response reports the head it will have. */
  private state(entry: Entry, pendingEvents = 0): RoomState {
    return roomStateOf(entry.actor.getSnapshot(), entry.version, entry.head + pendingEvents, entry.archived);
  }

  /**
   * The cached entry, brought to the stored version. On the embedded store the cache is the truth.
   * On a shared store another process may have written the room, so it is loaded again — through
   * `refreshes`: one load of a room at a time, begun after the caller asked, shared by everyone who
   * asks meanwhile (docs/architecture.md, "One room, many readers").
   */
  private freshEntry(slug: string): Promise<Entry | null> {
    const cached = this.cache.get(slug);
    if (cached && this.deps.store.kind === 'sqlite') return Promise.resolve(cached);
    return this.refreshes.run(slug, () => this.refresh(slug));
  }

  /**
   * Loads the room and returns the cached entry if it is the stored version, else a new entry
   * restored from the stored snapshot. The entry it replaces is not stopped: a batch or a caller may
   * still hold it, and a stopped room actor drops its decision children (which is how a read used to
   * find `decision <id> missing`). Nothing else refers to a replaced actor, and it arms no timers.
   * `read` supplies the record instead of the store (the room a lock's round trip brought along).
   */
  private async refresh(slug: string, again = false, read?: () => Promise<RoomRecord | null>): Promise<Entry | null> {
    const before = this.cache.get(slug);
    const versionBefore = before?.version;
    // A cached room is checked against the store in one round trip; its snapshot travels only when
    // another process changed it (docs/architecture.md, "One room, many processes").
    const record = read
      ? await read()
      : before
        ? await this.deps.store.loadIfChanged(slug, { version: before.version, revision: before.revision })
        : await this.deps.store.load(slug);
    const current = this.cache.get(slug);
    // This process created the room or committed to it while the load was in flight: what the load
    // read is not newer than the cache (the commit's reply came first, and the lock was still held).
    if (current && (current !== before || current.version !== versionBefore)) return current;
    if (record === 'unchanged') {
      // Evicted (its actor stopped) while the check was in flight: restore it from a full load.
      return current ?? this.refresh(slug, again);
    }
    if (!record) {
      if (current) this.evict(slug);
      return null;
    }
    if (current && current.version === record.version && current.revision === record.revision) return current;
    const versionAtLoad = current?.version;
    const { actor, stale } = restoreActor(record.snapshot);
    const { archived, chars } = await this.archiveOf(slug, actor, current);
    let committed: RoomState;
    try {
      committed = roomStateOf(actor.getSnapshot(), record.version, record.head, archived);
    } catch (error) {
      // The archive no longer holds a decision the loaded snapshot archived: the room was deleted
      // after the load. Load it once more, which answers what the store holds now.
      if (again) throw error;
      return this.refresh(slug, true);
    }
    const entry: Entry = {
      slug,
      actor,
      stale,
      version: record.version,
      revision: record.revision,
      head: record.head,
      snapshotText: record.snapshot,
      archived,
      archivedChars: chars,
      archiving: [],
      committed,
    };
    // A commit on the entry it replaces landed meanwhile (only a batch that lost its lock can): keep
    // the newer cache; the caller still gets this whole, consistent version.
    const latest = this.cache.get(slug);
    if (latest === current && latest?.version === versionAtLoad) this.remember(entry);
    return entry;
  }

  /**
   * The resolved decisions of a room restored from the store. The archive is append-only, so a room
   * already cached reads only from the first archived decision it does not know (decisions resolve
   * in any order), and nothing when it knows them all — unless the cache knew another history (a
   * Redis failover can leave one behind): then a decision of the snapshot is still missing, and the
   * whole archive is read again.
   */
  private async archiveOf(
    slug: string,
    actor: RoomActor,
    cached: Entry | undefined,
  ): Promise<{ archived: Map<string, DecisionData>; chars: number }> {
    const known = cached ? committedArchive(cached) : new Map<string, DecisionData>();
    const knownChars = cached?.archivedChars ?? 0;
    const snapshot = actor.getSnapshot();
    const children = snapshot.children as Record<string, AnyActorRef | undefined>;
    const missing = snapshot.context.decisionIds.filter((id) => !children[id] && !known.has(id));
    const read = async (after: number, into: Map<string, DecisionData>, chars: number) => {
      for (const a of await this.deps.store.archivedDecisions(slug, after)) {
        if (!into.has(a.decision_id)) chars += a.data.length;
        into.set(a.decision_id, JSON.parse(a.data) as DecisionData);
      }
      return { archived: into, chars };
    };
    if (missing.length === 0) return { archived: new Map(known), chars: knownChars };
    const seqOf = new Map(snapshot.context.decisions.map((d) => [d.id, d.seq]));
    const after = Math.min(...missing.map((id) => (seqOf.get(id) ?? 1) - 1));
    const found = await read(after, new Map(known), knownChars);
    if (missing.every((id) => found.archived.has(id))) return found;
    return read(0, new Map(), 0);
  }

  /** Puts the actor back to the last committed snapshot (after a rejected or failed command). */
  private rebuild(entry: Entry): void {
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

  /**
   * Caches the entry as the most recently used, then evicts the least recently used until both the
   * count and the weight fit. A room heavier than the whole budget is not kept at all: it is served
   * from the store on each request (it reloads like any evicted room).
   */
  private remember(entry: Entry): void {
    this.uncache(entry.slug);
    const weight = weightOf(entry);
    this.cache.set(entry.slug, entry);
    this.weights.set(entry.slug, weight);
    this.bytes += weight;
    const maxRooms = this.deps.maxCachedRooms ?? DEFAULT_CACHED_ROOMS;
    const maxBytes = this.deps.maxCachedBytes ?? DEFAULT_CACHED_BYTES;
    while (this.cache.size > maxRooms || (this.bytes > maxBytes && this.cache.size > 0)) {
      const oldest = this.cache.keys().next().value as string;
      const evicted = this.cache.get(oldest)!;
      this.uncache(oldest);
      // A room with a turn in flight keeps its actor running: that turn still commits from it.
      if (evicted !== entry && !this.queues.has(oldest) && !this.mailbox.active(oldest)) evicted.actor.stop();
    }
  }

  /** Drops a room from the cache and its weight from the total (the actor is the caller's business). */
  private uncache(slug: string): void {
    this.bytes -= this.weights.get(slug) ?? 0;
    this.weights.delete(slug);
    this.cache.delete(slug);
  }

  private async lockFor(slug: string): Promise<HeldLock | null> {
    // The embedded store is single-process: the mailbox already serialises, and the version check fences.
    if (this.deps.store.kind === 'sqlite') return null;
    const started = performance.now();
    const cached = this.cache.get(slug);
    const known = cached ? { version: cached.version, revision: cached.revision } : null;
    try {
      const lock = await this.deps.store.lock(slug, LOCK_TTL_MS, LOCK_WAIT_MS, known);
      this.deps.onLock?.((performance.now() - started) / 1000, true);
      return keptAlive(lock, LOCK_TTL_MS);
    } catch (error) {
      this.deps.onLock?.((performance.now() - started) / 1000, false);
      throw error;
    }
  }
}

/** A lock this process holds for a batch; a commit that let it go (release_lock) says so. */
interface HeldLock extends RoomLock {
  releasedByCommit(): void;
}

/** The lock, renewed every third of its TTL until released, however long the turn takes. */
function keptAlive(lock: RoomLock, ttlMs: number): HeldLock {
  const renewal = setInterval(() => void lock.renew(), Math.floor(ttlMs / 3));
  renewal.unref();
  let held = true;
  return {
    slug: lock.slug,
    token: lock.token,
    ...(lock.found !== undefined ? { found: lock.found } : {}),
    ...(lock.loaded !== undefined ? { loaded: lock.loaded } : {}),
    renew: () => lock.renew(),
    releasedByCommit: () => {
      held = false;
      clearInterval(renewal);
    },
    release: async () => {
      clearInterval(renewal);
      if (held) await lock.release();
      held = false;
    },
  };
}

function recordOf(idempotency: IdempotencySpec, result: unknown, now: number): IdempotencyRecord {
  return {
    scope: idempotency.scope,
    fingerprint: idempotency.fingerprint,
    status: 200,
    body: idempotency.seal.seal(JSON.stringify(result), result),
    created_at: now,
  };
}

/** The stored result, or null for a record written raw by an earlier version (it is not replayed). */
function replayOf(record: IdempotencyRecord, idempotency: IdempotencySpec): TurnResult<unknown> | null {
  if (!isSealedBody(record.body)) return null;
  if (record.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
  const body = idempotency.seal.open(record.body);
  return body === null ? null : { result: JSON.parse(body) as unknown, replayed: true };
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

/** The actor of a stored snapshot; `stale` when the text is in an older shape (see snapshot-format.ts). */
function restoreActor(snapshotText: string): { actor: RoomActor; stale: boolean } {
  const { snapshot, upgraded } = readSnapshot(snapshotText);
  // Restoring from a snapshot never reads input; the option is typed as required only for fresh actors.
  const actor = createActor(roomMachine, {
    snapshot: snapshot as unknown as Snapshot<unknown>,
    input: undefined as unknown as RoomInput,
  });
  actor.start();
  return { actor, stale: upgraded };
}

/** What a cached entry knows was archived by committed batches (not by one still committing). */
function committedArchive(entry: Entry): Map<string, DecisionData> {
  const archived = new Map(entry.archived);
  for (const id of entry.archiving) archived.delete(id);
  return archived;
}

function linkOf(receipt: StoredReceipt, state: RoomState) {
  return { sequence: receipt.sequence, hash: receipt.receipt_hash, prevHash: state.room.chain.head };
}

export function roomNotFound(slug: string): ProtocolError {
  return protocolError(
    'room.not_found',
    `Room ${slug} does not exist (or was deleted). Check the slug; rooms are created with POST /api/rooms.`,
    { details: { slug } },
  );
}

export function idempotencyConflict(): ProtocolError {
  return protocolError(
    'idempotency.conflict',
    'This Idempotency-Key was already used with a different request body for this operation. Use a new key for a new request, or resend the original body to get the original result.',
    { hint: 'Generate a fresh Idempotency-Key for each distinct request.' },
  );
}

export type { ErrorSpec };
