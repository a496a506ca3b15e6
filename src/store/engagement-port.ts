/**
 * The storage port of engagement (docs/agents.md, The REST loop): opener-seal wake bookkeeping, webhook
 * subscriptions and the webhook delivery outbox. Every RoomStore carries one (`store.engagement`); the
 * same contract suite runs against the SQLite and Redis implementations.
 *
 * Everything here belongs to a room and goes when the room is deleted.
 */

export interface WebhookRecord {
  /** UUID. */
  id: string;
  slug: string;
  /** Who registered it: `participant:<id>`, or `operator` for the admin token. */
  owner: string;
  url: string;
  /** Stored event types to deliver; empty means all. */
  event_types: string[];
  /** The `whsec_…` signing secret, kept to sign deliveries. */
  secret: string;
  created_at: number;
  /** Epoch ms of the (first) disabling, by unregistering or automatically; null while active. */
  disabled_at: number | null;
  /** Highest event seq already turned into deliveries (the room head at registration, then moving). */
  cursor: number;
  /** Consecutive events whose attempts were all exhausted; reset by a success. */
  failure_streak: number;
  /** The Idempotency-Key scope and request fingerprint of the registration, when one was sent. */
  idempotency: { scope: string; fingerprint: string } | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'exhausted' | 'dropped';

export interface DeliveryRecord {
  slug: string;
  webhook_id: string;
  event_id: string;
  seq: number;
  status: DeliveryStatus;
  /** Attempts made (claimed) so far. */
  attempts: number;
  /** When the next attempt is due (a claimed attempt holds it as its lease); null once settled. */
  next_attempt_at: number | null;
}

export interface DeliveryDraft {
  event_id: string;
  seq: number;
}

export type DeliveryOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: number }
  /** All attempts failed: the webhook's failure streak grows, and it is disabled at `disableAfter`. */
  | { kind: 'exhausted'; at: number; disableAfter: number }
  /** Not deliverable any more (webhook disabled, event or room gone). */
  | { kind: 'dropped' };

export interface EngagementStore {
  /** Decision ids whose opener-seal wake this participant has already consumed. */
  consumedOpenerWakes(slug: string, participantId: string): Promise<string[]>;

  /** Marks opener-seal wakes consumed; returns how many were not consumed before. */
  consumeOpenerWakes(slug: string, participantId: string, decisionIds: string[]): Promise<number>;

  /** Stores a new subscription of an existing room. */
  createWebhook(webhook: WebhookRecord): Promise<void>;

  /** The room's subscriptions, disabled ones included, oldest first. */
  webhooks(slug: string): Promise<WebhookRecord[]>;

  /** Sets disabled_at unless already set; returns the subscription, or null when unknown. */
  disableWebhook(slug: string, id: string, atMs: number): Promise<WebhookRecord | null>;

  /** Slugs that may have active subscriptions (a superset), for recovery sweeps. */
  webhookRooms(): Promise<string[]>;

  /**
   * Adds a pending delivery (due at `atMs`) per draft and moves the subscription's cursor from
   * `fromSeq` to `throughSeq`, atomically. False, and nothing written, unless the subscription is
   * active and its cursor is still `fromSeq` (another writer got there first).
   */
  enqueueDeliveries(
    slug: string,
    webhookId: string,
    fromSeq: number,
    throughSeq: number,
    drafts: DeliveryDraft[],
    atMs: number,
  ): Promise<boolean>;

  /**
   * Pending deliveries due at `nowMs`, at most `limit`, with the rooms taking turns: every room's
   * earliest before any room's second, so one room's backlog never hides another room's delivery.
   * Within a turn, earliest first.
   */
  dueDeliveries(nowMs: number, limit: number): Promise<DeliveryRecord[]>;

  /** Earliest due time of any pending delivery, or null. */
  nextDeliveryAt(): Promise<number | null>;

  /** Pending deliveries in the outbox: its depth, for metrics. */
  pendingDeliveries(): Promise<number>;

  /**
   * Claims the next attempt: succeeds for exactly one caller, and only while the delivery is pending,
   * due at `nowMs` and has made exactly `attempts` attempts. The claim counts the attempt and holds the
   * delivery until `leaseUntilMs`, after which an unsettled attempt (a crashed process) is due again.
   */
  claimDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    leaseUntilMs: number,
  ): Promise<boolean>;

  /**
   * Moves a due delivery to `untilMs` without counting an attempt (its receiver is parked). Same
   * conditions as a claim: pending, due at `nowMs`, exactly `attempts` made; false otherwise.
   */
  deferDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    untilMs: number,
  ): Promise<boolean>;

  /** Records a claimed attempt's outcome. A delivery that is no longer pending is left as it is. */
  settleDelivery(slug: string, webhookId: string, eventId: string, outcome: DeliveryOutcome): Promise<void>;

  /** One subscription's deliveries in seq order (inspection and tests). */
  deliveries(slug: string, webhookId: string): Promise<DeliveryRecord[]>;
}
