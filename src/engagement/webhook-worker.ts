/**
 * The webhook outbox (docs/agents.md, The REST loop), in two steps that both live in the store:
 *
 * - Enqueue: each subscription has a cursor into the room's event log. Catching up turns the events
 *   after the cursor into pending deliveries and moves the cursor, atomically and compare-and-set, so
 *   however many processes catch up at once, each event is enqueued once. It runs after every local
 *   commit, at start-up and on a periodic sweep: a crash between a commit and its enqueue loses nothing.
 * - Deliver: due deliveries are claimed one attempt at a time (exactly one process wins each attempt),
 *   sent, and settled as delivered, retried on the backoff schedule, or exhausted. A claim holds the
 *   delivery for a lease; an attempt whose process died is due again when the lease ends.
 *
 * Consent (webhook-verification.ts): a subscription whose receiver has not answered its verification
 * delivery yet is given that delivery and nothing else; its cursor stays where it was registered, so
 * once it is verified the room's events since then are enqueued like any others. Settled deliveries
 * are removed by the sweep once SETTLED_DELIVERY_RETENTION_MS old.
 *
 * Owner access (docs/architecture.md, Engagement): a commit that changes the room's `config.auth`
 * (`accessChanged`, from the after-commit hook) makes the room's next catch-up, before it enqueues
 * anything, disable the subscriptions of seats that can no longer read the room
 * (`owner_access_lost`). As a second line, a room event is not sent to a subscription whose owner seat
 * cannot read the room by the state the attempt reads anyway to redact the event; the subscription is
 * disabled then.
 *
 * Time is the injected clock; `runDue()` lets tests drive retries without sleeping.
 */
import { authRefusesSeat } from '../auth/caller.js';
import { memberById } from '../domain/roster.js';
import type { RoomState } from '../domain/state.js';
import { redactEvent } from '../domain/views/events.js';
import type { Clock } from '../runtime/clock.js';
import { Mailbox } from '../runtime/mailbox.js';
import { type DeliveryOutcome, type DeliveryRecord, ownerSeat, type WebhookRecord } from '../store/engagement-port.js';
import type { RoomStore, StoredEvent } from '../store/port.js';
import type { StateSource } from './waiters.js';
import { OriginBreaker, originOf } from './webhook-breaker.js';
import type { WebhookSender } from './webhook-client.js';
import { DeliveryLanes, LANE_LIMITS } from './webhook-lanes.js';
import type { AttemptOutcome } from '../observability/metrics.js';
import { deliveryHeaders } from './webhook-signing.js';
import { isVerification, judgeAttempt, verificationBody } from './webhook-verification.js';

/** Longer than an attempt can take (10 s), so a live attempt is never claimed twice. */
const LEASE_MS = 60_000;
/** Settled deliveries (delivered, exhausted, refused, dropped) are kept this long, then removed. */
export const SETTLED_DELIVERY_RETENTION_MS = 24 * 3600 * 1000;
/** Settled deliveries removed per store call by the sweep. */
const PRUNE_PAGE = 1000;
/** A room event due for a subscription not verified yet (stored before consent existed) waits this long. */
const UNVERIFIED_WAIT_MS = 60_000;
/** Subscriptions whose verification delivery this process has enqueued (remembered at most). */
const MAX_REMEMBERED_VERIFICATIONS = 10_000;
const ENQUEUE_PAGE = 500;
/** Due deliveries read from the outbox at a time, beyond those already waiting in the lanes. */
const DUE_BATCH = 500;
/**
 * Deliveries held in memory at most, waiting for a lane (a few hundred bytes each): the rest stay in
 * the outbox until there is room. One room holds at most ROOM_WAITING of them, one event's fan-out to
 * the most webhooks a room may have, so a room's backlog cannot fill the memory others need to be read.
 */
const MAX_WAITING = 10_000;
const ROOM_WAITING = 2_500;
/** Fewer waiting than this, and the outbox has more: read on. */
const LOW_WATER = 250;
/** While attempts are in flight the pump reads the outbox at least this often (retries falling due). */
const REFILL_MS = 1000;
/** The timer re-reads the store at least this often, and sweeps for missed enqueues this often. */
const MAX_SLEEP_MS = 30_000;
const SWEEP_MS = 60_000;
const IDLE_RETRY_MS = 1000;

export interface WebhookWorkerDeps {
  store: RoomStore;
  states: StateSource;
  clock: Clock;
  send: WebhookSender;
  allowPrivate: boolean;
  /** Add the Standard Webhooks entries to each signature header (WEBHOOK_STANDARD_SIGNATURE). */
  standardSignature?: boolean;
  userAgent: string;
  onError(error: unknown, context: string): void;
  /** How each attempt ended, once the store has it (the metrics count them). */
  onSettled?: (outcome: AttemptOutcome) => void;
}

export class WebhookWorker {
  private readonly catchUps = new Mailbox();
  private readonly queuedCatchUps = new Map<string, Promise<boolean>>();
  /** Rooms whose commits changed who may read them, with each such commit's state, not acted on yet. */
  private readonly accessChanges = new Map<string, RoomState[]>();
  /** Verification deliveries enqueued by this process (enqueueing one again changes nothing). */
  private readonly verificationsEnqueued = new Set<string>();
  private readonly breaker = new OriginBreaker();
  private readonly lanes = new DeliveryLanes<DeliveryRecord>(LANE_LIMITS, this.breaker);
  /** Subscriptions and states read for the deliveries of the latest refill (renewed by each one). */
  private run: RunCache;
  private pumping: Promise<void> | null = null;
  /** Set by `runDue()`: the pump reads the outbox again before it rests. */
  private wanted = false;
  private readonly wakers = new Set<() => void>();
  private attemptedLastRun = 0;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.run = new RunCache(deps);
  }

  /** Receiving origins held back after timeouts right now: the endpoints' health, for the metrics. */
  trippedOrigins(): number {
    return this.breaker.tripped(this.deps.clock.now());
  }

  private async settle(slug: string, webhookId: string, eventId: string, outcome: DeliveryOutcome): Promise<void> {
    await this.deps.store.engagement.settleDelivery(slug, webhookId, eventId, outcome);
    this.deps.onSettled?.(outcome.kind);
  }

  /** Catches up every subscription (recovering enqueues a crash skipped), then delivers what is due. */
  async start(): Promise<void> {
    this.stopped = false;
    try {
      await this.deps.store.engagement.upgrade(this.deps.clock.now());
    } catch (error) {
      this.deps.onError(error, 'webhook store upgrade');
    }
    await this.sweep();
    this.sweeper = setInterval(() => void this.sweep().then(() => this.runDue()), SWEEP_MS);
    this.sweeper.unref();
    void this.runDue();
  }

  /** Stops timers and waits for the attempts in flight to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    this.timer = null;
    this.sweeper = null;
    await this.catchUps.drain();
    this.wake();
    await this.pumping;
  }

  /** A local commit added events to a room: enqueue them for its subscriptions and deliver. */
  noteCommit(slug: string): void {
    if (this.stopped) return;
    // A room without subscriptions owes nothing new; retries already due run on the timer.
    void this.catchUp(slug).then((subscribed) => (subscribed ? this.runDue() : undefined));
  }

  /**
   * A commit changed who may read the room (`changesReadAccess`): the room's next catch-up first
   * disables the subscriptions of seats that could not read it as of that commit. Called in the
   * after-commit hook, before the commit's own catch-up is queued, so none of its events is enqueued
   * for them.
   */
  accessChanged(slug: string, state: RoomState): void {
    const pending = this.accessChanges.get(slug) ?? [];
    pending.push(state);
    this.accessChanges.set(slug, pending);
  }

  /** Turns every room's unenqueued events into deliveries, and removes old settled deliveries. */
  async sweep(): Promise<void> {
    try {
      for (const slug of await this.deps.store.engagement.webhookRooms()) await this.catchUp(slug);
    } catch (error) {
      this.deps.onError(error, 'webhook sweep');
    }
    try {
      const before = this.deps.clock.now() - SETTLED_DELIVERY_RETENTION_MS;
      while ((await this.deps.store.engagement.pruneSettledDeliveries(before, PRUNE_PAGE)) >= PRUNE_PAGE) {
        if (this.stopped) break;
      }
    } catch (error) {
      this.deps.onError(error, 'webhook delivery pruning');
    }
  }

  /** Enqueues a room's new events for its subscriptions; true when it has any active one. */
  catchUp(slug: string): Promise<boolean> {
    // A catch-up that has not started yet will see this commit too: join it rather than queue another
    // (1,000 registrations in a row would otherwise queue 1,000 passes over up to 1,000 subscriptions).
    const queued = this.queuedCatchUps.get(slug);
    if (queued) return queued;
    const catchUp = this.catchUps.run(slug, async () => {
      this.queuedCatchUps.delete(slug);
      const access = this.accessChanges.get(slug);
      this.accessChanges.delete(slug);
      try {
        let hooks = (await this.deps.store.engagement.webhooks(slug)).filter((hook) => hook.disabled_at === null);
        if (access) hooks = await this.disableUnreadable(slug, hooks, access);
        await this.enqueueVerifications(
          slug,
          hooks.filter((hook) => hook.verified_at === null),
        );
        await this.enqueue(
          slug,
          hooks.filter((hook) => hook.verified_at !== null),
        );
        return hooks.length > 0;
      } catch (error) {
        // A disabling not done yet is done by the next catch-up (which enqueues nothing before it).
        if (access) this.accessChanges.set(slug, [...access, ...(this.accessChanges.get(slug) ?? [])]);
        this.deps.onError(error, `webhook enqueue for ${slug}`);
        return true;
      }
    });
    this.queuedCatchUps.set(slug, catchUp);
    return catchUp;
  }

  /**
   * Attempts every delivery due now. Calls made while the pump runs join it and make it read the
   * outbox again, so what was due when `runDue()` was called has been attempted when it resolves.
   */
  runDue(): Promise<void> {
    this.wanted = true;
    this.wake();
    if (this.pumping) return this.pumping;
    this.pumping = (async () => {
      try {
        await this.pump();
      } catch (error) {
        this.deps.onError(error, 'webhook delivery run');
      } finally {
        this.pumping = null;
        this.arm();
      }
    })();
    return this.pumping;
  }

  /**
   * Disables (`owner_access_lost`) the subscriptions whose owner seat could not read the room as of
   * any of these committed states; returns the others.
   */
  private async disableUnreadable(
    slug: string,
    hooks: readonly WebhookRecord[],
    states: readonly RoomState[],
  ): Promise<WebhookRecord[]> {
    const lost = new Set(hooks.filter((hook) => states.some((state) => ownerLostAccess(state, hook.owner))));
    const ids = [...lost].map((hook) => hook.id);
    await this.deps.store.engagement.disableWebhooks(slug, ids, this.deps.clock.now(), 'owner_access_lost');
    return hooks.filter((hook) => !lost.has(hook));
  }

  /**
   * Gives each subscription not verified yet its verification delivery, without moving its cursor
   * (compare-and-set on the cursor it has; a delivery that exists already is left as it is).
   */
  private async enqueueVerifications(slug: string, hooks: readonly WebhookRecord[]): Promise<void> {
    const { store, clock } = this.deps;
    await Promise.all(
      hooks
        .filter((hook) => !this.verificationsEnqueued.has(hook.id))
        .map(async (hook) => {
          const draft = { event_id: hook.id, seq: 0 };
          if (await store.engagement.enqueueDeliveries(slug, hook.id, hook.cursor, hook.cursor, [draft], clock.now())) {
            if (this.verificationsEnqueued.size >= MAX_REMEMBERED_VERIFICATIONS) this.verificationsEnqueued.clear();
            this.verificationsEnqueued.add(hook.id);
          }
        }),
    );
  }

  /**
   * Moves the subscriptions' cursors to the room's head, enqueueing what each wants on the way. The
   * events are read a page at a time once for all of them: a room may hold thousands of subscriptions,
   * and one read each on every commit made each of its commits cost thousands of queries.
   */
  private async enqueue(slug: string, hooks: readonly WebhookRecord[]): Promise<void> {
    const { store, clock } = this.deps;
    const cursors = new Map(hooks.map((hook) => [hook, hook.cursor]));
    while (cursors.size > 0) {
      const from = Math.min(...cursors.values());
      const events = await store.events(slug, from, ENQUEUE_PAGE);
      if (events.length === 0) return;
      const through = events.at(-1)!.seq;
      // Those further on wait for a later page; every round moves the lowest cursors, so this ends.
      const behind = [...cursors].filter(([, cursor]) => cursor < through);
      // All at once: the store writes them in one transaction (SQLite group commit, Redis pipeline).
      await Promise.all(
        behind.map(async ([hook, cursor]) => {
          const drafts = events
            .filter((e) => e.seq > cursor && wants(hook, e))
            .map((e) => ({ event_id: e.id, seq: e.seq }));
          // False: another process moved this cursor (and continues from there), or the hook was disabled.
          const moved = await store.engagement.enqueueDeliveries(slug, hook.id, cursor, through, drafts, clock.now());
          if (moved) cursors.set(hook, through);
          else cursors.delete(hook);
        }),
      );
    }
  }

  /**
   * Reads due deliveries from the outbox into the lanes and sends what the lanes allow, until nothing
   * is due, waiting or in flight. A slow or dead receiver holds only its own lanes (webhook-lanes.ts),
   * and a commit in another room is read and sent while it hangs: `runDue()` wakes the pump.
   */
  private async pump(): Promise<void> {
    const attempts = new Set<Promise<void>>();
    let more = false;
    this.attemptedLastRun = 0;
    for (;;) {
      if (this.stopped) break;
      if (this.wanted || (more && this.lanes.size - this.lanes.sending < LOW_WATER)) {
        this.wanted = false;
        more = await this.refill();
      }
      for (let pick = this.lanes.next(this.deps.clock.now()); pick; pick = this.lanes.next(this.deps.clock.now())) {
        const { entry } = pick;
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          this.lanes.finish(entry);
          this.wake();
        };
        const work =
          pick.kind === 'park' ? this.park(entry.item, pick.until) : this.attempt(entry.item, release).finally(release);
        const tracked: Promise<void> = work
          .catch((error) => this.deps.onError(error, `webhook delivery ${entry.key}`))
          .finally(() => {
            attempts.delete(tracked);
            this.wake();
          });
        attempts.add(tracked);
        if (pick.kind === 'send') this.attemptedLastRun++;
      }
      if (attempts.size === 0 && !this.wanted && !more) break;
      // Nothing more can go now: wait for an attempt to end, a commit, or the next look at the outbox.
      if (!(await this.sleep(REFILL_MS))) this.wanted = true;
    }
    await Promise.all(attempts);
  }

  /** Adds due deliveries the lanes do not hold yet; true when the outbox may have more. */
  private async refill(): Promise<boolean> {
    const run = new RunCache(this.deps);
    this.run = run;
    const limit = Math.min(this.lanes.size + DUE_BATCH, MAX_WAITING);
    if (limit <= this.lanes.size) return true;
    const due = await this.deps.store.engagement.dueDeliveries(this.deps.clock.now(), limit);
    for (const delivery of due) {
      const key = deliveryKey(delivery);
      if (this.lanes.has(key) || this.lanes.heldFor(delivery.slug) >= ROOM_WAITING) continue;
      const hook = await run.webhook(delivery.slug, delivery.webhook_id);
      if (!hook || hook.disabled_at !== null) {
        const dropped = { kind: 'dropped', at: this.deps.clock.now() } as const;
        await this.settle(delivery.slug, delivery.webhook_id, delivery.event_id, dropped);
        continue;
      }
      if (hook.verified_at === null && !isVerification(hook, delivery.event_id)) {
        // A room event of a subscription stored before consent existed: it waits for the verification.
        const now = this.deps.clock.now();
        const { slug, webhook_id: webhookId, event_id: eventId, attempts } = delivery;
        await this.deps.store.engagement.deferDelivery(
          slug,
          webhookId,
          eventId,
          attempts,
          now,
          now + UNVERIFIED_WAIT_MS,
        );
        continue;
      }
      this.lanes.add({ key, slug: delivery.slug, url: hook.url, client: hook.client, item: delivery });
    }
    return due.length >= limit;
  }

  /** Moves a delivery to its parked origin's next probe, without spending one of its attempts. */
  private async park(delivery: DeliveryRecord, until: number): Promise<void> {
    const { slug, webhook_id: webhookId, event_id: eventId } = delivery;
    const now = this.deps.clock.now();
    await this.deps.store.engagement.deferDelivery(slug, webhookId, eventId, delivery.attempts, now, until);
  }

  /** Resolves true when woken (an attempt ended, a commit), false after `ms`. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.wakers.delete(done);
        resolve(false);
      }, ms);
      timer.unref();
      this.wakers.add(done);
    });
  }

  private wake(): void {
    const wakers = [...this.wakers];
    this.wakers.clear();
    for (const waker of wakers) waker();
  }

  /**
   * One attempt: claim, send, settle. `release` frees the attempt's lanes as soon as the receiver has
   * answered (or not): the settle is the store's business, and settles of attempts ending together
   * then share one write.
   */
  private async attempt(delivery: DeliveryRecord, release: () => void): Promise<void> {
    const { store, clock } = this.deps;
    const run = this.run;
    const { slug, webhook_id: webhookId, event_id: eventId } = delivery;
    const hook = await run.webhook(slug, webhookId);
    if (!hook || hook.disabled_at !== null) {
      await this.settle(slug, webhookId, eventId, { kind: 'dropped', at: clock.now() });
      return;
    }
    const verification = isVerification(hook, eventId);
    // The second line: a room event goes only to a subscription whose owner still reads the room,
    // judged by the state the body is redacted for (read once per run).
    const state = verification ? null : await run.state(slug);
    if (state && ownerLostAccess(state, hook.owner)) {
      await store.engagement.disableWebhooks(slug, [webhookId], clock.now(), 'owner_access_lost');
      run.forget(slug);
      await this.settle(slug, webhookId, eventId, { kind: 'dropped', at: clock.now() });
      return;
    }
    const now = clock.now();
    if (!(await store.engagement.claimDelivery(slug, webhookId, eventId, delivery.attempts, now, now + LEASE_MS))) {
      return;
    }
    const body = verification ? verificationBody(hook) : await run.body(slug, eventId);
    if (body === null) {
      await this.settle(slug, webhookId, eventId, { kind: 'dropped', at: clock.now() });
      return;
    }
    const timestamp = Math.floor(clock.now() / 1000);
    const result = await this.deps.send(
      hook.url,
      {
        'content-type': 'application/json',
        'user-agent': this.deps.userAgent,
        ...deliveryHeaders(hook.secret, eventId, timestamp, body, this.deps.standardSignature === true),
      },
      body,
      this.deps.allowPrivate,
    );
    // The breaker learns first, so the freed lane is handed out knowing how this origin behaved.
    const origin = originOf(hook.url);
    if (result.timedOut) this.breaker.timedOut(origin, clock.now());
    else this.breaker.answered(origin);
    const outcome = judgeAttempt(result, verification, delivery.attempts + 1, clock.now());
    // A success frees the lanes at once; a failure once settled, so that the next attempt to this
    // endpoint is claimed knowing whether this one disabled the subscription.
    if (outcome.kind === 'delivered' || outcome.kind === 'verified') release();
    await this.settle(slug, webhookId, eventId, outcome);
    // An exhausted event may have disabled the subscription: later attempts of this run must see that.
    // (A claim is refused for a disabled subscription anyway, so a refusal needs no re-read of the
    // room's subscriptions: hundreds of them refusing would each re-read them all.)
    if (outcome.kind === 'exhausted') run.forget(slug);
    // Consent given: the room's events since the registration are enqueued now.
    if (outcome.kind === 'verified') this.noteCommit(slug);
  }

  /** Sleeps until the next due delivery (at most MAX_SLEEP_MS, so other processes' work is seen). */
  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.deps.store.engagement.nextDeliveryAt().then(
      (next) => {
        if (this.stopped) return;
        const wait = next === null ? MAX_SLEEP_MS : Math.min(Math.max(next - this.deps.clock.now(), 0), MAX_SLEEP_MS);
        // A due delivery this process could not attempt (claimed elsewhere) must not spin the timer.
        const delay = wait === 0 && this.attemptedLastRun === 0 ? IDLE_RETRY_MS : wait;
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.runDue(), delay);
        this.timer.unref();
      },
      (error) => this.deps.onError(error, 'webhook timer'),
    );
  }
}

/** Reads shared by the attempts of one run: each room's subscriptions and state, read once. */
class RunCache {
  private readonly hooks = new Map<string, Promise<Map<string, WebhookRecord>>>();
  private readonly states = new Map<string, ReturnType<StateSource['read']>>();
  /** A fan-out sends one event to many endpoints: it is read and redacted once. */
  private readonly bodies = new Map<string, Promise<string | null>>();

  constructor(private readonly deps: WebhookWorkerDeps) {}

  async webhook(slug: string, id: string): Promise<WebhookRecord | undefined> {
    let hooks = this.hooks.get(slug);
    if (!hooks) {
      hooks = this.deps.store.engagement.webhooks(slug).then((all) => new Map(all.map((h) => [h.id, h])));
      this.hooks.set(slug, hooks);
    }
    return (await hooks).get(id);
  }

  /** The delivery body of an event: `{slug, event}`, redacted for the room's state; null when gone. */
  body(slug: string, eventId: string): Promise<string | null> {
    const key = `${slug}|${eventId}`;
    let body = this.bodies.get(key);
    if (!body) {
      body = Promise.all([this.deps.store.eventById(slug, eventId), this.state(slug)]).then(([event, state]) =>
        event && state ? JSON.stringify({ slug, event: redactEvent(state, event) }) : null,
      );
      this.bodies.set(key, body);
      // Failures are not kept: the next attempt reads again.
      body.catch(() => this.bodies.delete(key));
    }
    return body;
  }

  forget(slug: string): void {
    this.hooks.delete(slug);
  }

  state(slug: string): ReturnType<StateSource['read']> {
    let state = this.states.get(slug);
    if (!state) {
      state = this.deps.states.read(slug);
      this.states.set(slug, state);
    }
    return state;
  }
}

/**
 * Whether a subscription's owner can no longer read the room in this state: its seat is one the
 * room's config.auth now refuses (auth/caller.ts, authRefusesSeat), or is not in the room. The
 * operator's subscriptions never lose access.
 */
export function ownerLostAccess(state: RoomState, owner: string): boolean {
  const seat = ownerSeat(owner);
  if (seat === null) return false;
  const member = memberById(state.room, seat);
  return member === undefined || authRefusesSeat(member, state.room.config.auth);
}

/** Whether a commit's events change who may read the room: a change of its `config.auth`. */
export function changesReadAccess(events: readonly StoredEvent[]): boolean {
  return events.some((event) => {
    const changed = event.data.changed;
    return event.event_type === 'room.settings_updated' && Array.isArray(changed) && changed.includes('auth');
  });
}

function wants(hook: WebhookRecord, event: StoredEvent): boolean {
  return hook.event_types.length === 0 || hook.event_types.includes(event.event_type);
}

function deliveryKey(d: DeliveryRecord): string {
  return `${d.slug}|${d.webhook_id}|${d.event_id}`;
}
