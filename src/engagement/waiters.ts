/**
 * Parked long-polls, grouped per room. A group listens to its room's commits on the CommitBus; each
 * notice runs one evaluation pass over the group from a single committed-state read (passes are
 * coalesced while one runs), so ten thousand waiters in a room cost one read per commit, and an idle
 * waiter costs a timer and nothing else. A waiter is evaluated once more when it parks, which covers
 * commits made between its first read and its registration.
 */
import type { RoomState } from '../domain/state.js';
import type { RoomStore, StoredEvent } from '../store/port.js';
import {
  evaluateWake,
  factsNeeded,
  isActivityFor,
  type WaitQuery,
  type Wake,
  type WakeFacts,
  wakeKey,
} from './actionable.js';
import type { ParkingCapacity, ParkingClaim } from './capacity.js';
import type { CommitBus } from './commit-bus.js';
import type { CredentialWatch, SessionEnd } from './credential-watch.js';
import { pendingOpenerSeal } from './opener-wakes.js';

export interface StateSource {
  /** The committed state (due decisions sealed first), or null for an unknown room. */
  read(slug: string): Promise<RoomState | null>;
}

export type WaitOutcome =
  | { kind: 'wake'; state: RoomState; wake: Wake }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'gone' }
  /** The credential the wait was opened with was superseded, revoked or expired (credential-watch.ts). */
  | { kind: 'ended'; end: SessionEnd };

export interface WaiterDeps {
  states: StateSource;
  store: RoomStore;
  bus: CommitBus;
  capacity: ParkingCapacity;
  onError(error: unknown, slug: string): void;
}

interface Group {
  waiters: Set<Waiter>;
  unlisten: () => void;
  running: boolean;
  again: boolean;
}

const ACTIVITY_PAGE = 256;

class Waiter {
  /** Set while an outcome waits to be taken by `next()`; the waiter takes no other outcome then. */
  private held: WaitOutcome | null = null;
  private taker: ((outcome: WaitOutcome) => void) | null = null;
  private finished = false;
  /** The query's wake key (actionable.ts), made once: every pass reads it. */
  readonly key: string;

  constructor(
    readonly query: WaitQuery,
    readonly watch: CredentialWatch | null,
    private readonly onWake: WakeListener | null,
  ) {
    this.key = wakeKey(query);
  }

  get open(): boolean {
    return !this.finished && this.held === null;
  }

  deliver(outcome: WaitOutcome): void {
    if (!this.open) return;
    if (outcome.kind !== 'wake') this.finished = true;
    else this.onWake?.(outcome.wake, outcome.state);
    if (this.taker) {
      const take = this.taker;
      this.taker = null;
      take(outcome);
    } else {
      this.held = outcome;
    }
  }

  next(): Promise<WaitOutcome> {
    const held = this.held;
    if (held) {
      this.held = null;
      return Promise.resolve(held);
    }
    return new Promise((resolve) => {
      this.taker = resolve;
    });
  }

  finish(): void {
    this.finished = true;
  }
}

/**
 * Told of each wake delivered to a waiter, synchronously, inside the evaluation pass that found it
 * (before the waiter's `next()` resolves): long-poll.ts writes the REST answer from here.
 */
export type WakeListener = (wake: Wake, state: RoomState) => void;

/** One parked long-poll, as seen by its caller. */
export interface ParkedWait {
  /** The next wake, or how the wait ended. */
  next(): Promise<WaitOutcome>;
  /** A wake turned out not to be deliverable (an opener-seal wake consumed elsewhere): look again. */
  recheck(): void;
  /** Leaves the group; always called, in a finally. */
  release(): void;
}

export class WaiterRegistry {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly deps: WaiterDeps) {}

  /** Evaluates a query once against the committed state, without parking. */
  async evaluateNow(slug: string, query: WaitQuery): Promise<WaitOutcome> {
    const state = await this.deps.states.read(slug);
    if (!state) return { kind: 'gone' };
    const wake = evaluateWake(state, query, await new FactGatherer(this.deps.store, state).gather(query));
    return wake ? { kind: 'wake', state, wake } : { kind: 'timeout' };
  }

  /**
   * Parks a waiter until a wake, `waitMs` of wall time, the signal, or the end of the credential it was
   * opened with (`watch`, re-checked on every evaluation). Throws 503 when the pool is full, 429 when the
   * claim's address or credential already holds its share. `signal` must be the call's own (a
   * request's): its abort listener is not removed on release. `onWake` hears each wake as it is delivered.
   */
  park(
    slug: string,
    query: WaitQuery,
    waitMs: number,
    claim: ParkingClaim,
    signal?: AbortSignal,
    watch: CredentialWatch | null = null,
    onWake: WakeListener | null = null,
  ): ParkedWait {
    const leave = this.deps.capacity.enter(claim);
    const waiter = new Waiter(query, watch, onWake);
    const group = this.groupOf(slug);
    group.waiters.add(waiter);
    const timer = setTimeout(() => waiter.deliver({ kind: 'timeout' }), waitMs);
    const abort = () => waiter.deliver({ kind: 'aborted' });
    signal?.addEventListener('abort', abort, { once: true });
    if (signal?.aborted) abort();
    const disarm = watch?.arm((end) => waiter.deliver({ kind: 'ended', end })) ?? (() => {});
    const check = () => void this.evaluate(slug, [waiter]).catch((error) => this.deps.onError(error, slug));
    check();
    let released = false;
    return {
      next: () => waiter.next(),
      recheck: check,
      release: () => {
        if (released) return;
        released = true;
        waiter.finish();
        clearTimeout(timer);
        disarm();
        // The abort listener stays: the signal is this call's own and is dropped with it, an abort
        // after release delivers nothing (the waiter is finished), and unhooking a listener from an
        // AbortSignal was a twelfth of the CPU of waking 10,000 waiters (docs/performance.md).
        group.waiters.delete(waiter);
        if (group.waiters.size === 0 && this.groups.get(slug) === group) {
          group.unlisten();
          this.groups.delete(slug);
        }
        leave();
      },
    };
  }

  /** Ends every parked wait with a timeout (shutdown). */
  releaseAll(): void {
    for (const group of this.groups.values()) {
      for (const waiter of group.waiters) waiter.deliver({ kind: 'timeout' });
    }
  }

  get parked(): number {
    let count = 0;
    for (const group of this.groups.values()) count += group.waiters.size;
    return count;
  }

  private groupOf(slug: string): Group {
    const existing = this.groups.get(slug);
    if (existing) return existing;
    const group: Group = { waiters: new Set(), unlisten: () => {}, running: false, again: false };
    group.unlisten = this.deps.bus.listen(slug, () => void this.pass(slug, group));
    this.groups.set(slug, group);
    return group;
  }

  private async pass(slug: string, group: Group): Promise<void> {
    if (group.running) {
      group.again = true;
      return;
    }
    group.running = true;
    try {
      do {
        group.again = false;
        const open = [...group.waiters].filter((w) => w.open);
        if (open.length > 0) await this.evaluate(slug, open);
      } while (group.again);
    } catch (error) {
      this.deps.onError(error, slug);
    } finally {
      group.running = false;
    }
  }

  private async evaluate(slug: string, waiters: Waiter[]): Promise<void> {
    const state = await this.deps.states.read(slug);
    if (!state) {
      for (const waiter of waiters) waiter.deliver({ kind: 'gone' });
      return;
    }
    const facts = new FactGatherer(this.deps.store, state);
    // One outcome per wake key (actionable.ts): a room's ten thousand waiters with the same query are
    // evaluated once and handed the same outcome, which lets long-poll.ts build its answer once too.
    const outcomes = new Map<string, WaitOutcome | null>();
    for (const waiter of waiters) {
      if (!waiter.open) continue;
      const end = waiter.watch?.check(state);
      if (end) {
        waiter.deliver({ kind: 'ended', end });
        continue;
      }
      let outcome = outcomes.get(waiter.key);
      if (outcome === undefined) {
        const wake = evaluateWake(state, waiter.query, await facts.gather(waiter.query));
        outcome = wake ? { kind: 'wake', state, wake } : null;
        outcomes.set(waiter.key, outcome);
      }
      if (outcome) waiter.deliver(outcome);
    }
  }
}

/**
 * Gathers the store-backed facts of one evaluation pass, sharing reads between waiters: one
 * consumed-wakes read per participant, and event pages shared by waiters with the same cursor.
 */
class FactGatherer {
  private readonly openerSeals = new Map<string, Promise<WakeFacts['openerSeal']>>();
  private readonly pages = new Map<number, Promise<StoredEvent[]>>();
  private readonly scans = new Map<string, Promise<StoredEvent | null>>();

  constructor(
    private readonly store: RoomStore,
    private readonly state: RoomState,
  ) {}

  async gather(query: WaitQuery): Promise<WakeFacts> {
    const needed = factsNeeded(this.state, query);
    const participantId = query.reader.participantId;
    return {
      openerSeal: needed.openerSeal && participantId !== null ? await this.openerSeal(participantId) : null,
      activity: needed.activity ? await this.activity(query.sinceSeq, participantId) : null,
    };
  }

  private openerSeal(participantId: string): Promise<WakeFacts['openerSeal']> {
    let found = this.openerSeals.get(participantId);
    if (!found) {
      found = pendingOpenerSeal(this.store.engagement, this.state, participantId);
      this.openerSeals.set(participantId, found);
    }
    return found;
  }

  private activity(after: number, participantId: string | null): Promise<StoredEvent | null> {
    const key = `${after}|${participantId ?? ''}`;
    let found = this.scans.get(key);
    if (!found) {
      found = this.scan(after, participantId);
      this.scans.set(key, found);
    }
    return found;
  }

  /** The first event after the cursor, up to the state's head, that is activity for the caller. */
  private async scan(after: number, participantId: string | null): Promise<StoredEvent | null> {
    let cursor = after;
    while (cursor < this.state.head) {
      const page = await this.page(cursor);
      if (page.length === 0) return null;
      for (const event of page) {
        if (event.seq > this.state.head) return null;
        if (isActivityFor(event, participantId)) return event;
      }
      cursor = page.at(-1)!.seq;
    }
    return null;
  }

  private page(after: number): Promise<StoredEvent[]> {
    let page = this.pages.get(after);
    if (!page) {
      page = this.store.events(this.state.slug, after, ACTIVITY_PAGE);
      this.pages.set(after, page);
    }
    return page;
  }
}
