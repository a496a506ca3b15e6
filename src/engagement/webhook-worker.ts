/**
 * The webhook outbox (06 §7.2–7.3), in two steps that both live in the store:
 *
 * - Enqueue: each subscription has a cursor into the room's event log. Catching up turns the events
 *   after the cursor into pending deliveries and moves the cursor, atomically and compare-and-set, so
 *   however many processes catch up at once, each event is enqueued once. It runs after every local
 *   commit, at start-up and on a periodic sweep: a crash between a commit and its enqueue loses nothing.
 * - Deliver: due deliveries are claimed one attempt at a time (exactly one process wins each attempt),
 *   sent, and settled as delivered, retried on the backoff schedule, or exhausted. A claim holds the
 *   delivery for a lease; an attempt whose process died is due again when the lease ends.
 *
 * Time is the injected clock; `runDue()` lets tests drive retries without sleeping.
 */
import { redactEvent } from '../domain/views/events.js';
import type { Clock } from '../runtime/clock.js';
import { Mailbox } from '../runtime/mailbox.js';
import type { DeliveryRecord, WebhookRecord } from '../store/engagement-port.js';
import type { RoomStore, StoredEvent } from '../store/port.js';
import { DISABLE_AFTER_EXHAUSTED, nextAttemptAt } from './retry-schedule.js';
import type { StateSource } from './waiters.js';
import type { WebhookSender } from './webhook-client.js';
import { signatureHeader } from './webhook-signing.js';

/** Longer than an attempt can take (10 s), so a live attempt is never claimed twice. */
const LEASE_MS = 60_000;
const ENQUEUE_PAGE = 500;
const DUE_BATCH = 100;
const CONCURRENCY = 16;
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
  userAgent: string;
  onError(error: unknown, context: string): void;
}

export class WebhookWorker {
  private readonly catchUps = new Mailbox();
  private running: Promise<void> | null = null;
  private rerun = false;
  private attemptedLastRun = 0;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(private readonly deps: WebhookWorkerDeps) {}

  /** Catches up every subscription (recovering enqueues a crash skipped), then delivers what is due. */
  async start(): Promise<void> {
    this.stopped = false;
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
    await this.running;
  }

  /** A local commit added events to a room: enqueue them for its subscriptions and deliver. */
  noteCommit(slug: string): void {
    if (this.stopped) return;
    // A room without subscriptions owes nothing new; retries already due run on the timer.
    void this.catchUp(slug).then((subscribed) => (subscribed ? this.runDue() : undefined));
  }

  /** Turns every room's unenqueued events into deliveries. */
  async sweep(): Promise<void> {
    try {
      for (const slug of await this.deps.store.engagement.webhookRooms()) await this.catchUp(slug);
    } catch (error) {
      this.deps.onError(error, 'webhook sweep');
    }
  }

  /** Enqueues a room's new events for its subscriptions; true when it has any active one. */
  catchUp(slug: string): Promise<boolean> {
    return this.catchUps.run(slug, async () => {
      try {
        const hooks = (await this.deps.store.engagement.webhooks(slug)).filter((hook) => hook.disabled_at === null);
        for (const hook of hooks) await this.enqueue(hook);
        return hooks.length > 0;
      } catch (error) {
        this.deps.onError(error, `webhook enqueue for ${slug}`);
        return true;
      }
    });
  }

  /**
   * Attempts every delivery due now. Calls made while a run is in progress join it and make it run
   * once more, so what was due when `runDue()` was called has been attempted when it resolves.
   */
  runDue(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.rerun = false;
          this.attemptedLastRun = await this.runOnce();
        } while (this.rerun && !this.stopped);
      } catch (error) {
        this.deps.onError(error, 'webhook delivery run');
      } finally {
        this.running = null;
        this.arm();
      }
    })();
    return this.running;
  }

  private async enqueue(hook: WebhookRecord): Promise<void> {
    const { store, clock } = this.deps;
    let cursor = hook.cursor;
    for (;;) {
      const events = await store.events(hook.slug, cursor, ENQUEUE_PAGE);
      if (events.length === 0) return;
      const through = events.at(-1)!.seq;
      const drafts = events.filter((e) => wants(hook, e)).map((e) => ({ event_id: e.id, seq: e.seq }));
      // False: another process moved this cursor (and continues from there), or the hook was disabled.
      if (!(await store.engagement.enqueueDeliveries(hook.slug, hook.id, cursor, through, drafts, clock.now()))) return;
      cursor = through;
    }
  }

  /**
   * Attempts every due delivery once. CONCURRENCY lanes pull from one queue that is refilled from the
   * store as it runs low, so a slow or dead receiver holds only its own lane (for its 10 s timeout),
   * never the deliveries behind it.
   */
  private async runOnce(): Promise<number> {
    const tried = new Set<string>();
    const run = new RunCache(this.deps);
    const queue: DeliveryRecord[] = [];
    let drained = false;
    let refilling: Promise<void> | null = null;
    const refill = async () => {
      const due = (await this.deps.store.engagement.dueDeliveries(this.deps.clock.now(), DUE_BATCH)).filter(
        (d) => !tried.has(deliveryKey(d)),
      );
      if (due.length === 0) drained = true;
      for (const d of due) tried.add(deliveryKey(d));
      queue.push(...due);
    };
    const take = async (): Promise<DeliveryRecord | null> => {
      for (;;) {
        if (this.stopped) return null;
        const next = queue.shift();
        if (next) return next;
        if (drained) return null;
        refilling ??= refill().finally(() => {
          refilling = null;
        });
        await refilling;
      }
    };
    const lane = async () => {
      for (let d = await take(); d; d = await take()) {
        await this.attempt(d, run).catch((error) => this.deps.onError(error, `webhook delivery ${deliveryKey(d)}`));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    return tried.size;
  }

  private async attempt(delivery: DeliveryRecord, run: RunCache): Promise<void> {
    const { store, clock } = this.deps;
    const { slug, webhook_id: webhookId, event_id: eventId } = delivery;
    const hook = await run.webhook(slug, webhookId);
    if (!hook || hook.disabled_at !== null) {
      await store.engagement.settleDelivery(slug, webhookId, eventId, { kind: 'dropped' });
      return;
    }
    const now = clock.now();
    if (!(await store.engagement.claimDelivery(slug, webhookId, eventId, delivery.attempts, now, now + LEASE_MS))) {
      return;
    }
    const [event, state] = await Promise.all([store.eventById(slug, eventId), run.state(slug)]);
    if (!event || !state) {
      await store.engagement.settleDelivery(slug, webhookId, eventId, { kind: 'dropped' });
      return;
    }
    const body = JSON.stringify({ slug, event: redactEvent(state, event) });
    const timestamp = Math.floor(clock.now() / 1000);
    const result = await this.deps.send(
      hook.url,
      {
        'content-type': 'application/json',
        'user-agent': this.deps.userAgent,
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(hook.secret, timestamp, body),
      },
      body,
      this.deps.allowPrivate,
    );
    if (result.ok) {
      await store.engagement.settleDelivery(slug, webhookId, eventId, { kind: 'delivered' });
      return;
    }
    const failedAt = clock.now();
    const retryAt = nextAttemptAt(delivery.attempts + 1, failedAt);
    await store.engagement.settleDelivery(
      slug,
      webhookId,
      eventId,
      retryAt === null
        ? { kind: 'exhausted', at: failedAt, disableAfter: DISABLE_AFTER_EXHAUSTED }
        : { kind: 'retry', at: retryAt },
    );
    // An exhausted event may have disabled the subscription: later attempts of this run must see that.
    if (retryAt === null) run.forget(slug);
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
  private readonly hooks = new Map<string, Promise<WebhookRecord[]>>();
  private readonly states = new Map<string, ReturnType<StateSource['read']>>();

  constructor(private readonly deps: WebhookWorkerDeps) {}

  async webhook(slug: string, id: string): Promise<WebhookRecord | undefined> {
    let hooks = this.hooks.get(slug);
    if (!hooks) {
      hooks = this.deps.store.engagement.webhooks(slug);
      this.hooks.set(slug, hooks);
    }
    return (await hooks).find((h) => h.id === id);
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

function wants(hook: WebhookRecord, event: StoredEvent): boolean {
  return hook.event_types.length === 0 || hook.event_types.includes(event.event_type);
}

function deliveryKey(d: DeliveryRecord): string {
  return `${d.slug}|${d.webhook_id}|${d.event_id}`;
}
