/**
 * The storage port of engagement (docs/agents.md, The REST loop): opener-seal wake bookkeeping, webhook
 * subscriptions and the webhook delivery outbox. Every RoomStore carries one (`store.engagement`); the
 * same contract suite runs against the SQLite and Redis implementations.
 *
 * Everything here belongs to a room and goes when the room is deleted.
 */

const SEAT_OWNER = 'participant:';

/** The owner key of a seat's subscription, and the seat it names (null for the operator's). */
export function seatOwner(participantId: string): string {
  return `${SEAT_OWNER}${participantId}`;
}

export function ownerSeat(owner: string): string | null {
  return owner.startsWith(SEAT_OWNER) ? owner.slice(SEAT_OWNER.length) : null;
}

export interface WebhookRecord {
  /** UUID. */
  id: string;
  slug: string;
  /** Who registered it: `participant:<id>` (`seatOwner`), or `operator` for the admin token. */
  owner: string;
  url: string;
  /** Stored event types to deliver; empty means all. */
  event_types: string[];
  /** The `whsec_…` signing secret, kept to sign deliveries. */
  secret: string;
  created_at: number;
  /** Epoch ms of the (first) disabling, by unregistering or automatically; null while active. */
  disabled_at: number | null;
  /** Why it was disabled (set with disabled_at); null while active. */
  disabled_reason: DisableReason | null;
  /**
   * When its receiver consented: answered 2xx to the verification delivery. Null until then, and no
   * room event is enqueued for it (docs/agents.md, Webhooks: consent).
   */
  verified_at: number | null;
  /** Highest event seq already turned into deliveries (the room head at registration, then moving). */
  cursor: number;
  /** Consecutive events whose attempts were all exhausted; reset by a success. */
  failure_streak: number;
  /** Consecutive refusals (a 3xx or 4xx answer other than 408 and 429); reset by a success. */
  refusal_streak: number;
  /** The Idempotency-Key scope and request fingerprint of the registration, when one was sent. */
  idempotency: { scope: string; fingerprint: string } | null;
  /**
   * Who registered it, for the per-address share of an origin: a hash of the client's address group
   * (`webhookClient` in operations/webhooks.ts). Absent on subscriptions stored before the share
   * existed (they count only towards the service-wide limit).
   */
  client?: string;
}

/**
 * Why a subscription stopped: unregistered by its owner or the operator; its receiver refused the
 * verification delivery (a redirect or a 4xx) or never answered it; answered 404/410 (gone); refused
 * deliveries several times in a row; let 3 consecutive events exhaust their attempts; or its owner
 * seat can no longer read the room (`owner_access_lost`: the room's `config.auth` now refuses every
 * credential that reaches the seat; docs/architecture.md, Engagement). Stored as plain text: a reason
 * a later version adds is read back as it is.
 */
export type DisableReason =
  | 'unregistered'
  | 'verification_refused'
  | 'verification_unanswered'
  | 'gone'
  | 'refused'
  | 'exhausted'
  | 'owner_access_lost';

export const DISABLE_REASONS: readonly DisableReason[] = [
  'unregistered',
  'verification_refused',
  'verification_unanswered',
  'gone',
  'refused',
  'exhausted',
  'owner_access_lost',
];

export type DeliveryStatus = 'pending' | 'delivered' | 'exhausted' | 'refused' | 'dropped';

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
  /** When it was settled (delivered, exhausted, refused or dropped); null while pending. */
  settled_at: number | null;
}

export interface DeliveryDraft {
  event_id: string;
  seq: number;
}

export type DeliveryOutcome =
  /** A 2xx: the subscription's streaks reset. */
  | { kind: 'delivered'; at: number }
  /** A 2xx to the verification delivery: as delivered, and the subscription is verified at `at`. */
  | { kind: 'verified'; at: number }
  | { kind: 'retry'; at: number }
  /**
   * All attempts failed: the webhook's failure streak grows, and it is disabled (for `reason`) once
   * the streak reaches `disableAfter`.
   */
  | { kind: 'exhausted'; at: number; disableAfter: number; reason: DisableReason }
  /** The receiver refused it (3xx/4xx): no retry; the refusal streak grows, disabled at `disableAfter`. */
  | { kind: 'refused'; at: number; disableAfter: number; reason: DisableReason }
  /** Not deliverable any more (webhook disabled, event or room gone). */
  | { kind: 'dropped'; at: number };

export interface EngagementStore {
  /** Decision ids whose opener-seal wake this participant has already consumed. */
  consumedOpenerWakes(slug: string, participantId: string): Promise<string[]>;

  /** Marks opener-seal wakes consumed; returns how many were not consumed before. */
  consumeOpenerWakes(slug: string, participantId: string, decisionIds: string[]): Promise<number>;

  /**
   * Brings what earlier versions stored up to date where a schema migration could not (once; later
   * calls return at once). Called by the webhook worker before its first sweep.
   */
  upgrade(nowMs: number): Promise<void>;

  /** Stores a new subscription of an existing room. */
  createWebhook(webhook: WebhookRecord): Promise<void>;

  /** The room's subscriptions, disabled ones included, oldest first. */
  webhooks(slug: string): Promise<WebhookRecord[]>;

  /** Sets disabled_at (and its reason) unless already set; returns the subscription, or null when unknown. */
  disableWebhook(slug: string, id: string, atMs: number, reason?: DisableReason): Promise<WebhookRecord | null>;

  /**
   * Sets disabled_at and its reason on each of these subscriptions not disabled yet (unknown ids are
   * skipped), in one write; those already disabled keep their first time and reason.
   */
  disableWebhooks(slug: string, ids: readonly string[], atMs: number, reason: DisableReason): Promise<void>;

  /**
   * Whether `cap` or more active subscriptions, across every room, have a URL of this origin (the
   * service-wide registration limit).
   */
  originFull(origin: string, cap: number): Promise<boolean>;

  /** Whether `client` (`WebhookRecord.client`) already holds `cap` active subscriptions to `origin`. */
  originHeldBy(origin: string, client: string, cap: number): Promise<boolean>;

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

  /**
   * Removes up to `limit` deliveries settled before `beforeMs` (pending ones are never removed); returns
   * how many went.
   */
  pruneSettledDeliveries(beforeMs: number, limit: number): Promise<number>;

  /** One subscription's deliveries in seq order (inspection and tests). */
  deliveries(slug: string, webhookId: string): Promise<DeliveryRecord[]>;
}

/** The receiving origin of a webhook URL (scheme, host and port); a URL that does not parse is its own. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
