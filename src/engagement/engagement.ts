/**
 * Engagement, composed: the commit path feeds the CommitBus (and, in Redis mode, the other processes
 * waiting on the room, through its sharded channel); long-poll groups, MCP waits and SSE streams
 * listen on the bus, and the rooms they listen to are the rooms this process subscribes to; the
 * webhook outbox catches up after each local commit and on its sweep, never on notices. All of it is
 * a mirror of committed state, never the truth.
 */
import type { ServerResponse } from 'node:http';
import type { RoomState } from '../domain/state.js';
import type { Clock } from '../runtime/clock.js';
import type { AttemptOutcome } from '../observability/metrics.js';
import type { CommitNotice } from '../runtime/registry.js';
import type { RoomStore } from '../store/port.js';
import { ParkingCapacity, type ParkingClaim, type ParkingShares } from './capacity.js';
import { CommitBus } from './commit-bus.js';
import type { CredentialWatch } from './credential-watch.js';
import { EventStream, EventStreams } from './event-stream.js';
import { type LongPollCall, longPoll } from './long-poll.js';
import { consumeOnRead } from './opener-wakes.js';
import { type CommitNoticeMode, type NoticeChannel, RedisCommitNotices } from './redis-fanout.js';
import { keysOf } from '../store/redis-keys.js';
import { RoomFeeds } from './room-feed.js';
import { type StateSource, WaiterRegistry } from './waiters.js';
import { createSender } from './webhook-client.js';
import { changesReadAccess, WebhookWorker } from './webhook-worker.js';

export interface EngagementSettings {
  /** Parked long-polls plus open SSE streams per process; past it, new ones get 503 (shares: capacity.ts). */
  maxParked: number;
  /** How much of that one client address, and one credential, may hold. */
  parkedShares?: ParkingShares;
  /** Lets webhooks target loopback and private addresses (tests, private deployments). */
  webhookAllowPrivate: boolean;
  /** Sign deliveries for Standard Webhooks verifiers too (in the same header, after the protocol's). */
  webhookStandardSignature?: boolean;
  /** Active webhooks one room may hold. */
  webhookMaxPerRoom: number;
  /** Active webhooks one seat may hold in a room (docs/agents.md, Webhooks). */
  webhookMaxPerSeat: number;
  /** Active webhooks to one receiving origin in a room, and across the service. */
  webhookMaxPerOriginPerRoom: number;
  webhookMaxPerOrigin: number;
  /** One client address's share of `webhookMaxPerOrigin` for one origin (an IPv6 /64 as one address). */
  webhookMaxPerOriginPerAddress: number;
  /** Redis mode: where commit notices are published for the other processes, and how (COMMIT_NOTICES). */
  redis: { url: string; cluster: boolean; keyPrefix: string; commitNotices?: CommitNoticeMode } | null;
  userAgent: string;
}

export interface EngagementDeps {
  store: RoomStore;
  states: StateSource;
  clock: Clock;
  /** How each webhook attempt ended (the metrics count them). */
  onDelivery?: (outcome: AttemptOutcome) => void;
  /** A commit notice reached this process over Redis (the metrics count them). */
  onNotice?: (channel: NoticeChannel) => void;
}

export interface EngagementLog {
  error(details: Record<string, unknown>, message: string): void;
}

/** The `retry:` an event stream ends with when its process drains: reconnect soon, elsewhere. */
const RECONNECT_AFTER_MS = 1000;

export class Engagement {
  readonly bus = new CommitBus();
  readonly capacity: ParkingCapacity;
  readonly waiters: WaiterRegistry;
  readonly webhooks: WebhookWorker;
  readonly streams = new EventStreams();
  private readonly feeds: RoomFeeds;
  /** Redis mode, once started: the rooms this process subscribes to, and what it hears. */
  notices: RedisCommitNotices | null = null;
  /** Commit notices heard over Redis, per channel (the metric `conclave_commit_notices_received_total`). */
  readonly noticesReceived: Record<NoticeChannel, number> = { room: 0, broadcast: 0 };
  private log: EngagementLog = { error: () => {} };

  constructor(
    private readonly deps: EngagementDeps,
    readonly settings: EngagementSettings,
  ) {
    this.capacity = new ParkingCapacity(settings.maxParked, settings.parkedShares);
    this.waiters = new WaiterRegistry({
      states: deps.states,
      store: deps.store,
      bus: this.bus,
      capacity: this.capacity,
      onError: (error, slug) => this.log.error({ err: error, slug }, 'long-poll evaluation failed'),
    });
    this.feeds = new RoomFeeds({
      store: deps.store,
      states: deps.states,
      bus: this.bus,
      onError: (error, slug) => this.log.error({ err: error, slug }, 'event stream failed'),
    });
    this.webhooks = new WebhookWorker({
      store: deps.store,
      states: deps.states,
      clock: deps.clock,
      send: createSender(),
      allowPrivate: settings.webhookAllowPrivate,
      standardSignature: settings.webhookStandardSignature === true,
      userAgent: settings.userAgent,
      onError: (error, context) => this.log.error({ err: error }, `${context} failed`),
      ...(deps.onDelivery ? { onSettled: deps.onDelivery } : {}),
    });
  }

  /** Joins the other processes (Redis mode) and recovers the webhook outbox. */
  async start(log: EngagementLog): Promise<void> {
    this.log = log;
    const { redis } = this.settings;
    if (redis) {
      // The store announces every commit itself (store/redis-scripts.ts); this listens to the others'
      // in the rooms something here waits on.
      const origin = this.deps.store.commitOrigin;
      if (origin === undefined) throw new Error('a store shared over Redis must announce its commits');
      const notices = await RedisCommitNotices.open({
        url: redis.url,
        cluster: redis.cluster,
        keys: keysOf(redis.keyPrefix),
        mode: redis.commitNotices ?? 'sharded',
        ownOrigin: origin,
        onCommit: (slug) => this.bus.notify(slug),
        onNotice: (channel) => {
          this.noticesReceived[channel]++;
          this.deps.onNotice?.(channel);
        },
        onError: (error) => this.log.error({ err: error }, 'commit notice subscription failed; retrying'),
      });
      this.notices = notices;
      this.bus.watchRooms(notices.rooms);
    }
    await this.webhooks.start();
  }

  /**
   * Answers every parked long-poll with its timeout shape (the client polls again, on another
   * process), ends every stream with a reconnect hint, and lets webhook attempts in flight settle.
   */
  async stop(): Promise<void> {
    this.waiters.releaseAll();
    this.streams.closeAll(RECONNECT_AFTER_MS);
    await this.webhooks.stop();
    this.bus.watchRooms(null);
    await this.notices?.close();
    this.notices = null;
  }

  /** The registry's after-commit hook; runs outside the room's turn. */
  onCommit(notice: CommitNotice): void {
    // Before the commit's catch-up is queued: none of its events may reach a seat it shut out.
    if (notice.subscribed !== false && changesReadAccess(notice.events)) {
      this.webhooks.accessChanged(notice.slug, notice.state);
    }
    queueMicrotask(() => {
      // The other processes waiting on the room heard of it from the commit itself (redis-fanout.ts).
      this.bus.notify(notice.slug);
      // A room the commit found without subscriptions owes no deliveries (one read fewer per commit).
      if (notice.events.length > 0 && notice.subscribed !== false) this.webhooks.noteCommit(notice.slug);
    });
  }

  longPoll(call: LongPollCall): Promise<Record<string, unknown>> {
    return longPoll(
      { waiters: this.waiters, states: this.deps.states, store: this.deps.store.engagement, clock: this.deps.clock },
      call,
    );
  }

  /** The opener read the room or its outcome with its own credential (docs/agents.md, The REST loop). */
  consumeOnRead(state: RoomState, participantId: string): Promise<void> {
    return consumeOnRead(this.deps.store.engagement, state, participantId);
  }

  /**
   * Opens an SSE stream after `afterSeq`. Throws the 503 envelope when full (429 when the claim is over
   * its share), before `begin` takes the response over and writes the stream's headers.
   */
  openStream(
    slug: string,
    afterSeq: number,
    claim: ParkingClaim,
    begin: () => ServerResponse,
    watch: CredentialWatch | null = null,
  ): void {
    const leave = this.capacity.enter(claim);
    let response: ServerResponse;
    try {
      response = begin();
    } catch (error) {
      leave();
      throw error;
    }
    const stream = new EventStream(
      {
        store: this.deps.store,
        states: this.deps.states,
        feeds: this.feeds,
        onError: (error, room) => this.log.error({ err: error, slug: room }, 'event stream failed'),
      },
      slug,
      afterSeq,
      response,
      () => {
        this.streams.remove(stream);
        leave();
      },
      watch,
    );
    this.streams.add(stream);
    stream.start();
  }
}
