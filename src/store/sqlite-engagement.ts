/** EngagementStore on the SQLite store's connection; rows cascade away with their room. */
import type Database from 'better-sqlite3';
import type {
  DeliveryDraft,
  DeliveryOutcome,
  DeliveryRecord,
  DeliveryStatus,
  DisableReason,
  EngagementStore,
  WebhookRecord,
} from './engagement-port.js';
import { originOf } from './engagement-port.js';

export interface WebhookRow {
  id: string;
  slug: string;
  owner: string;
  url: string;
  event_types: string;
  secret: string;
  created_at: number;
  disabled_at: number | null;
  cursor: number;
  failure_streak: number;
  idempotency_scope: string | null;
  idempotency_fingerprint: string | null;
  /** Absent in a file from before migration 8 (read as it is by `conclave migrate`). */
  verified_at?: number | null;
  disabled_reason?: string | null;
  refusal_streak?: number;
  origin?: string;
  /** Absent in a file from before migration 9. */
  client?: string | null;
}

export interface DeliveryRow {
  slug: string;
  webhook_id: string;
  event_id: string;
  seq: number;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  settled_at?: number | null;
}

const DELIVERY_COLUMNS = 'slug, webhook_id, event_id, seq, status, attempts, next_attempt_at, settled_at';

function prepareStatements(db: Database.Database) {
  return {
    consumedWakes: db.prepare<[string, string], { decision_id: string }>(
      'SELECT decision_id FROM opener_wakes WHERE slug = ? AND participant_id = ?',
    ),
    consumeWake: db.prepare<[string, string, string]>(
      'INSERT OR IGNORE INTO opener_wakes (slug, participant_id, decision_id) VALUES (?, ?, ?)',
    ),
    insertWebhook: db.prepare<
      [
        string,
        string,
        string,
        string,
        string,
        string,
        number,
        number | null,
        number,
        number,
        string | null,
        string | null,
        number | null,
        string | null,
        number,
        string,
        string | null,
      ]
    >(
      `INSERT INTO webhooks (id, slug, owner, url, event_types, secret, created_at, disabled_at, cursor,
         failure_streak, idempotency_scope, idempotency_fingerprint, verified_at, disabled_reason,
         refusal_streak, origin, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    webhooks: db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE slug = ? ORDER BY created_at, id'),
    webhook: db.prepare<[string, string], WebhookRow>('SELECT * FROM webhooks WHERE slug = ? AND id = ?'),
    disableWebhook: db.prepare<[number, string, string, string]>(
      'UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE slug = ? AND id = ? AND disabled_at IS NULL',
    ),
    activeAt: db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM webhooks WHERE origin = ? AND disabled_at IS NULL',
    ),
    // Walks the origin's active subscriptions (the partial index), at most WEBHOOK_MAX_PER_ORIGIN of them;
    // counts the client's still awaiting their receiver's consent.
    awaitingAtBy: db.prepare<[string, string], { n: number }>(
      'SELECT COUNT(*) AS n FROM webhooks WHERE origin = ? AND disabled_at IS NULL AND verified_at IS NULL AND client = ?',
    ),
    webhookRooms: db.prepare<[], { slug: string }>(
      'SELECT DISTINCT slug FROM webhooks WHERE disabled_at IS NULL ORDER BY slug',
    ),
    advanceCursor: db.prepare<[number, string, string, number]>(
      'UPDATE webhooks SET cursor = ? WHERE slug = ? AND id = ? AND cursor = ? AND disabled_at IS NULL',
    ),
    insertDelivery: db.prepare<[string, string, string, number, number]>(
      `INSERT OR IGNORE INTO deliveries (webhook_id, event_id, slug, seq, status, attempts, next_attempt_at)
       VALUES (?, ?, ?, ?, 'pending', 0, ?)`,
    ),
    // Rooms take turns: each room's deliveries are numbered earliest first, and turn 1 of every room
    // comes before any turn 2.
    dueDeliveries: db.prepare<[number, number], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM (
         SELECT ${DELIVERY_COLUMNS},
           ROW_NUMBER() OVER (PARTITION BY slug ORDER BY next_attempt_at, seq, webhook_id) AS turn
         FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ?)
       ORDER BY turn, next_attempt_at, seq LIMIT ?`,
    ),
    pendingDeliveries: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'pending'"),
    nextDeliveryAt: db.prepare<[], { at: number | null }>(
      "SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending'",
    ),
    claimDelivery: db.prepare<[number, string, string, string, number, number]>(
      `UPDATE deliveries SET attempts = attempts + 1, next_attempt_at = ?
       WHERE slug = ? AND webhook_id = ? AND event_id = ? AND status = 'pending' AND attempts = ?
         AND next_attempt_at <= ?
         AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = deliveries.webhook_id AND w.disabled_at IS NULL)`,
    ),
    deferDelivery: db.prepare<[number, string, string, string, number, number]>(
      `UPDATE deliveries SET next_attempt_at = ?
       WHERE slug = ? AND webhook_id = ? AND event_id = ? AND status = 'pending' AND attempts = ?
         AND next_attempt_at <= ?`,
    ),
    settleDelivery: db.prepare<[string, number | null, number | null, string, string, string]>(
      `UPDATE deliveries SET status = ?, next_attempt_at = ?, settled_at = ?
       WHERE slug = ? AND webhook_id = ? AND event_id = ? AND status = 'pending'`,
    ),
    resetStreaks: db.prepare<[string, string]>(
      'UPDATE webhooks SET failure_streak = 0, refusal_streak = 0 WHERE slug = ? AND id = ?',
    ),
    verify: db.prepare<[number, string, string]>(
      'UPDATE webhooks SET verified_at = ? WHERE slug = ? AND id = ? AND verified_at IS NULL',
    ),
    growStreak: db.prepare<[string, string]>(
      'UPDATE webhooks SET failure_streak = failure_streak + 1 WHERE slug = ? AND id = ?',
    ),
    growRefusals: db.prepare<[string, string]>(
      'UPDATE webhooks SET refusal_streak = refusal_streak + 1 WHERE slug = ? AND id = ?',
    ),
    disableAtStreak: db.prepare<[number, string, string, string, number]>(
      `UPDATE webhooks SET disabled_at = ?, disabled_reason = ?
       WHERE slug = ? AND id = ? AND disabled_at IS NULL AND failure_streak >= ?`,
    ),
    disableAtRefusals: db.prepare<[number, string, string, string, number]>(
      `UPDATE webhooks SET disabled_at = ?, disabled_reason = ?
       WHERE slug = ? AND id = ? AND disabled_at IS NULL AND refusal_streak >= ?`,
    ),
    pruneSettled: db.prepare<[number, number]>(
      `DELETE FROM deliveries WHERE (webhook_id, event_id) IN (
         SELECT webhook_id, event_id FROM deliveries WHERE status != 'pending' AND settled_at < ? LIMIT ?)`,
    ),
    deliveries: db.prepare<[string, string], DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE slug = ? AND webhook_id = ? ORDER BY seq`,
    ),
  };
}

export class SqliteEngagementStore implements EngagementStore {
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly consumeTransaction: Database.Transaction<(slug: string, pid: string, ids: string[]) => number>;
  private readonly enqueueTransaction: Database.Transaction<
    (slug: string, id: string, from: number, through: number, drafts: DeliveryDraft[], at: number) => boolean
  >;
  private readonly settleTransaction: Database.Transaction<
    (slug: string, webhookId: string, eventId: string, outcome: DeliveryOutcome) => void
  >;
  private readonly disableTransaction: Database.Transaction<
    (slug: string, ids: readonly string[], at: number, reason: DisableReason) => void
  >;

  /**
   * `run` is the owning store's wrapper: closed-store check and error mapping. `write` is its group
   * commit: the outbox writes of one event-loop turn (a fan-out's enqueues, the claims and settles of
   * attempts ending together) share one transaction and one fsync, so a 1,000-endpoint fan-out is a
   * handful of fsyncs rather than three thousand.
   */
  constructor(
    db: Database.Database,
    private readonly run: <T>(work: () => T) => Promise<T>,
    private readonly write: <T>(work: () => T) => Promise<T> = run,
  ) {
    this.sql = prepareStatements(db);
    this.consumeTransaction = db.transaction((slug, pid, ids) =>
      ids.reduce((added, id) => added + this.sql.consumeWake.run(slug, pid, id).changes, 0),
    );
    this.disableTransaction = db.transaction((slug, ids, at, reason) => {
      for (const id of ids) this.sql.disableWebhook.run(at, reason, slug, id);
    });
    this.enqueueTransaction = db.transaction((slug, id, from, through, drafts, at) => {
      if (this.sql.advanceCursor.run(through, slug, id, from).changes !== 1) return false;
      for (const d of drafts) this.sql.insertDelivery.run(id, d.event_id, slug, d.seq, at);
      return true;
    });
    this.settleTransaction = db.transaction((slug, webhookId, eventId, outcome) => {
      const status: DeliveryStatus =
        outcome.kind === 'retry' ? 'pending' : outcome.kind === 'verified' ? 'delivered' : outcome.kind;
      const next = outcome.kind === 'retry' ? outcome.at : null;
      const settledAt = outcome.kind === 'retry' ? null : outcome.at;
      if (this.sql.settleDelivery.run(status, next, settledAt, slug, webhookId, eventId).changes !== 1) return;
      if (outcome.kind === 'delivered' || outcome.kind === 'verified') this.sql.resetStreaks.run(slug, webhookId);
      if (outcome.kind === 'verified') this.sql.verify.run(outcome.at, slug, webhookId);
      if (outcome.kind === 'exhausted') {
        this.sql.growStreak.run(slug, webhookId);
        this.sql.disableAtStreak.run(outcome.at, outcome.reason, slug, webhookId, outcome.disableAfter);
      }
      if (outcome.kind === 'refused') {
        this.sql.growRefusals.run(slug, webhookId);
        this.sql.disableAtRefusals.run(outcome.at, outcome.reason, slug, webhookId, outcome.disableAfter);
      }
    });
  }

  consumedOpenerWakes(slug: string, participantId: string): Promise<string[]> {
    return this.run(() => this.sql.consumedWakes.all(slug, participantId).map((row) => row.decision_id));
  }

  consumeOpenerWakes(slug: string, participantId: string, decisionIds: string[]): Promise<number> {
    if (decisionIds.length === 0) return Promise.resolve(0);
    return this.run(() => this.consumeTransaction.immediate(slug, participantId, decisionIds));
  }

  /** Migration 8 (sqlite-schema.ts) did it all. */
  upgrade(_nowMs: number): Promise<void> {
    return Promise.resolve();
  }

  createWebhook(webhook: WebhookRecord): Promise<void> {
    return this.run(() => {
      this.sql.insertWebhook.run(
        webhook.id,
        webhook.slug,
        webhook.owner,
        webhook.url,
        JSON.stringify(webhook.event_types),
        webhook.secret,
        webhook.created_at,
        webhook.disabled_at,
        webhook.cursor,
        webhook.failure_streak,
        webhook.idempotency?.scope ?? null,
        webhook.idempotency?.fingerprint ?? null,
        webhook.verified_at,
        webhook.disabled_reason,
        webhook.refusal_streak,
        originOf(webhook.url),
        webhook.client ?? null,
      );
    });
  }

  webhooks(slug: string): Promise<WebhookRecord[]> {
    return this.run(() => this.sql.webhooks.all(slug).map(toWebhook));
  }

  disableWebhook(
    slug: string,
    id: string,
    atMs: number,
    reason: DisableReason = 'unregistered',
  ): Promise<WebhookRecord | null> {
    return this.run(() => {
      this.sql.disableWebhook.run(atMs, reason, slug, id);
      const row = this.sql.webhook.get(slug, id);
      return row ? toWebhook(row) : null;
    });
  }

  disableWebhooks(slug: string, ids: readonly string[], atMs: number, reason: DisableReason): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    return this.run(() => this.disableTransaction.immediate(slug, ids, atMs, reason));
  }

  originFull(origin: string, cap: number): Promise<boolean> {
    return this.run(() => (this.sql.activeAt.get(origin)?.n ?? 0) >= cap);
  }

  originHeldBy(origin: string, client: string, cap: number): Promise<boolean> {
    return this.run(() => (this.sql.awaitingAtBy.get(origin, client)?.n ?? 0) >= cap);
  }

  webhookRooms(): Promise<string[]> {
    return this.run(() => this.sql.webhookRooms.all().map((row) => row.slug));
  }

  enqueueDeliveries(
    slug: string,
    webhookId: string,
    fromSeq: number,
    throughSeq: number,
    drafts: DeliveryDraft[],
    atMs: number,
  ): Promise<boolean> {
    return this.write(() => this.enqueueTransaction.immediate(slug, webhookId, fromSeq, throughSeq, drafts, atMs));
  }

  dueDeliveries(nowMs: number, limit: number): Promise<DeliveryRecord[]> {
    return this.run(() => (limit > 0 ? this.sql.dueDeliveries.all(nowMs, limit).map(toDelivery) : []));
  }

  nextDeliveryAt(): Promise<number | null> {
    return this.run(() => this.sql.nextDeliveryAt.get()?.at ?? null);
  }

  pendingDeliveries(): Promise<number> {
    return this.run(() => this.sql.pendingDeliveries.get()?.n ?? 0);
  }

  claimDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    leaseUntilMs: number,
  ): Promise<boolean> {
    return this.write(
      () => this.sql.claimDelivery.run(leaseUntilMs, slug, webhookId, eventId, attempts, nowMs).changes === 1,
    );
  }

  deferDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    untilMs: number,
  ): Promise<boolean> {
    return this.write(
      () => this.sql.deferDelivery.run(untilMs, slug, webhookId, eventId, attempts, nowMs).changes === 1,
    );
  }

  settleDelivery(slug: string, webhookId: string, eventId: string, outcome: DeliveryOutcome): Promise<void> {
    return this.write(() => this.settleTransaction.immediate(slug, webhookId, eventId, outcome));
  }

  pruneSettledDeliveries(beforeMs: number, limit: number): Promise<number> {
    return this.write(() => this.sql.pruneSettled.run(beforeMs, limit).changes);
  }

  deliveries(slug: string, webhookId: string): Promise<DeliveryRecord[]> {
    return this.run(() => this.sql.deliveries.all(slug, webhookId).map(toDelivery));
  }
}

export function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    slug: row.slug,
    owner: row.owner,
    url: row.url,
    event_types: JSON.parse(row.event_types) as string[],
    secret: row.secret,
    created_at: row.created_at,
    disabled_at: row.disabled_at,
    // A file read before migration 8 (`conclave migrate` reads its source as it is) has none of these.
    disabled_reason: (row.disabled_reason ??
      (row.disabled_at === null
        ? null
        : row.failure_streak >= 3
          ? 'exhausted'
          : 'unregistered')) as DisableReason | null,
    verified_at: row.verified_at ?? null,
    cursor: row.cursor,
    failure_streak: row.failure_streak,
    refusal_streak: row.refusal_streak ?? 0,
    idempotency:
      row.idempotency_scope !== null && row.idempotency_fingerprint !== null
        ? { scope: row.idempotency_scope, fingerprint: row.idempotency_fingerprint }
        : null,
    ...(row.client ? { client: row.client } : {}),
  };
}

export function toDelivery(row: DeliveryRow): DeliveryRecord {
  return { ...row, status: row.status as DeliveryStatus, settled_at: row.settled_at ?? null };
}
