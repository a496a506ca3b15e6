/**
 * EngagementStore on the Redis store's connection. A room's engagement keys share its `{slug}` hash
 * tag, so each change is one script on one slot (deleteRoom removes them with the room).
 *
 * Global keys index the rooms: the set of rooms with webhooks, the due-delivery and settled-delivery
 * sorted sets, and per receiving origin a sorted set of its subscriptions (`<slug>|<id>`, scored by
 * registration time) for the service-wide per-origin limit, and one per origin and registering client
 * for that client's share of it.
 * They are written before the room keys they point to, and removed only once the room keys say so,
 * so a crash in between leaves an index entry that points at nothing (cleaned up when read), never a
 * delivery that no index can find.
 */
import type {
  DeliveryDraft,
  DeliveryOutcome,
  DeliveryRecord,
  DisableReason,
  EngagementStore,
  WebhookRecord,
} from './engagement-port.js';
import { originOf } from './engagement-port.js';
import {
  type EngagementCommands,
  type EngagementRedis,
  engagementKeys,
  type RedisCalls,
} from './redis-engagement-commands.js';
import { indexLegacyEngagement } from './redis-engagement-upgrade.js';
import { dueMember, fixedPart, parseDelivery, parseWebhooks, sortedKeys, takeTurns } from './redis-engagement-codec.js';

/**
 * An index entry whose delivery does not exist may belong to an enqueue still in flight (the index is
 * written first); it is removed only once it is this old.
 */
const ORPHAN_GRACE_MS = 60_000;

/** Due index entries read at a time: twice what is asked, within these bounds. */
const DUE_WINDOW_MIN = 200;
const DUE_WINDOW_MAX = 10_000;

export class RedisEngagementStore implements EngagementStore {
  private readonly webhookRoomsKey: string;
  private readonly dueKey: string;
  private readonly settledKey: string;

  constructor(
    private readonly redis: EngagementRedis,
    private readonly keyPrefix: string,
    private readonly roomKey: (slug: string) => string,
    private readonly calls: RedisCalls,
  ) {
    this.webhookRoomsKey = `${keyPrefix}webhook-rooms`;
    this.dueKey = `${keyPrefix}deliveries:due`;
    this.settledKey = `${keyPrefix}deliveries:settled`;
    this.originKey = (origin) => `${keyPrefix}webhook-origin:${origin}`;
    this.originClientKey = (origin, client) => `${keyPrefix}webhook-origin-client:${client}:${origin}`;
  }

  private readonly originKey: (origin: string) => string;
  private readonly originClientKey: (origin: string, client: string) => string;

  /** Writes the subscription into its origin's indexes (before its room keys: see the module comment). */
  private indexOrigin(webhook: WebhookRecord): Promise<unknown> {
    const member = `${webhook.slug}|${webhook.id}`;
    const origin = originOf(webhook.url);
    const add = (key: string) => this.calls.call(() => this.redis.zadd(key, webhook.created_at, member));
    return Promise.all([
      add(this.originKey(origin)),
      ...(webhook.client ? [add(this.originClientKey(origin, webhook.client))] : []),
    ]);
  }

  consumedOpenerWakes(slug: string, participantId: string): Promise<string[]> {
    return this.calls.call(async () => {
      const members = await this.redis.smembers(this.keys(slug).openerWakes);
      const prefix = `${participantId}|`;
      return members.filter((m) => m.startsWith(prefix)).map((m) => m.slice(prefix.length));
    });
  }

  consumeOpenerWakes(slug: string, participantId: string, decisionIds: string[]): Promise<number> {
    if (decisionIds.length === 0) return Promise.resolve(0);
    return this.calls.call(() =>
      this.redis.sadd(this.keys(slug).openerWakes, ...decisionIds.map((id) => `${participantId}|${id}`)),
    );
  }

  upgrade(nowMs: number): Promise<void> {
    const keys = {
      marker: `${this.keyPrefix}meta:webhook-consent-indexed`,
      settled: this.settledKey,
      origin: this.originKey,
    };
    return indexLegacyEngagement(this.redis, this.keyPrefix, keys, this.calls, nowMs);
  }

  async createWebhook(webhook: WebhookRecord): Promise<void> {
    await this.calls.call(() => this.redis.sadd(this.webhookRoomsKey, webhook.slug));
    await this.indexOrigin(webhook);
    await this.calls.call(() =>
      this.redis.conclaveCreateWebhook(
        this.keys(webhook.slug).webhooks,
        webhook.id,
        JSON.stringify(fixedPart(webhook)),
        webhook.cursor,
      ),
    );
  }

  /**
   * The origin's index holds every active subscription and maybe some that are no more: while it holds
   * fewer than `cap` entries the origin is not full. Otherwise each entry is checked against its room,
   * and those of disabled subscriptions (and old ones of missing ones: a registration in flight writes
   * the index first) are removed.
   */
  originFull(origin: string, cap: number): Promise<boolean> {
    return this.indexFull(this.originKey(origin), cap, (hook) => hook.disabled_at === null);
  }

  /**
   * The same count over the origin's index of one client's subscriptions, of those still awaiting
   * their receiver's consent: one consented to, or disabled, never counts here again and leaves it.
   */
  originHeldBy(origin: string, client: string, cap: number): Promise<boolean> {
    return this.indexFull(
      this.originClientKey(origin, client),
      cap,
      (hook) => hook.disabled_at === null && hook.verified_at === null,
    );
  }

  private indexFull(key: string, cap: number, counts: (hook: WebhookRecord) => boolean): Promise<boolean> {
    return this.calls.call(async () => {
      if ((await this.redis.zcard(key)) < cap) return false;
      const flat = await this.redis.zrange(key, 0, -1, 'WITHSCORES');
      const bySlug = new Map<string, { id: string; member: string; score: number }[]>();
      for (let i = 0; i < flat.length; i += 2) {
        const member = flat[i]!;
        const [slug, id] = member.split('|') as [string, string];
        const list = bySlug.get(slug) ?? [];
        list.push({ id, member, score: Number(flat[i + 1]) });
        bySlug.set(slug, list);
      }
      let active = 0;
      const stale: string[] = [];
      for (const [slug, entries] of bySlug) {
        const hooks = new Map((await this.webhooks(slug)).map((w) => [w.id, w]));
        for (const { id, member, score } of entries) {
          const hook = hooks.get(id);
          if (hook && counts(hook)) active++;
          else if (hook || score < Date.now() - ORPHAN_GRACE_MS) stale.push(member);
        }
      }
      if (stale.length > 0) await this.redis.zrem(key, ...stale);
      return active >= cap;
    });
  }

  /**
   * Removes deliveries settled before `beforeMs`, found through the settled index (written before the
   * settle it names, so an entry may name a delivery still pending: it is dropped from the index and
   * written again when that delivery settles).
   */
  pruneSettledDeliveries(beforeMs: number, limit: number): Promise<number> {
    if (limit <= 0) return Promise.resolve(0);
    return this.calls.call(async () => {
      const members = await this.redis.zrangebyscore(this.settledKey, '-inf', `(${beforeMs}`, 'LIMIT', 0, limit);
      let removed = 0;
      for (const member of members) {
        const [slug, webhookId, eventId] = member.split('|') as [string, string, string];
        const verdict = await this.redis.conclavePruneDelivery(
          this.keys(slug).deliveries,
          `${webhookId}|${eventId}`,
          beforeMs,
        );
        if (verdict === 1) removed++;
        if (verdict !== 3) await this.redis.zrem(this.settledKey, member);
      }
      return removed;
    });
  }

  webhooks(slug: string): Promise<WebhookRecord[]> {
    return this.calls.call(async () => parseWebhooks(await this.redis.hgetall(this.keys(slug).webhooks)));
  }

  async disableWebhook(
    slug: string,
    id: string,
    atMs: number,
    reason: DisableReason = 'unregistered',
  ): Promise<WebhookRecord | null> {
    const found = await this.calls.call(() =>
      this.redis.conclaveDisableWebhook(this.keys(slug).webhooks, id, atMs, reason),
    );
    if (found !== 1) return null;
    return (await this.webhooks(slug)).find((w) => w.id === id) ?? null;
  }

  /** One pipeline of the disabling script (a room's keys share one slot), one round trip. */
  disableWebhooks(slug: string, ids: readonly string[], atMs: number, reason: DisableReason): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    const key = this.keys(slug).webhooks;
    return this.calls.call(async () => {
      const pipeline = this.redis.pipeline() as unknown as EngagementCommands & {
        exec(): Promise<[Error | null, unknown][] | null>;
      };
      for (const id of ids) pipeline.conclaveDisableWebhook(key, id, atMs, reason);
      const replies = await pipeline.exec();
      if (replies === null) throw new Error('no reply to the webhook disabling');
      for (const [error] of replies) if (error) throw error;
    });
  }

  async webhookRooms(): Promise<string[]> {
    const slugs = await this.calls.call(() => this.redis.smembers(this.webhookRoomsKey));
    const live: string[] = [];
    for (const slug of slugs.sort()) {
      if ((await this.webhooks(slug)).some((w) => w.disabled_at === null)) live.push(slug);
      else await this.calls.bestEffort(() => this.redis.srem(this.webhookRoomsKey, slug));
    }
    return live;
  }

  async enqueueDeliveries(
    slug: string,
    webhookId: string,
    fromSeq: number,
    throughSeq: number,
    drafts: DeliveryDraft[],
    atMs: number,
  ): Promise<boolean> {
    if (drafts.length > 0) {
      const scored = drafts.flatMap((d) => [atMs, dueMember(slug, webhookId, d.event_id)]);
      await this.calls.call(() => this.redis.zadd(this.dueKey, 'NX', ...scored));
    }
    const keys = this.keys(slug);
    const args = drafts.flatMap((d) => [d.event_id, d.seq]);
    const done = await this.calls.call(() =>
      this.redis.conclaveEnqueue(
        keys.webhooks,
        keys.deliveries,
        webhookId,
        fromSeq,
        throughSeq,
        atMs,
        drafts.length,
        ...args,
      ),
    );
    return done === 1;
  }

  /**
   * Due index entries, each checked against the delivery it names: entries of settled deliveries (and
   * old ones of missing deliveries) are removed, entries of deliveries due later are rescored, the
   * due ones are returned. The index is read a window at a time (the earliest entries) and the rooms
   * in a window take turns, so a room with a long backlog does not hide the others.
   */
  dueDeliveries(nowMs: number, limit: number): Promise<DeliveryRecord[]> {
    if (limit <= 0) return Promise.resolve([]);
    const window = Math.min(Math.max(limit * 2, DUE_WINDOW_MIN), DUE_WINDOW_MAX);
    return this.calls.call(async () => {
      const due: DeliveryRecord[] = [];
      let offset = 0;
      while (due.length < limit) {
        const flat = await this.redis.zrangebyscore(this.dueKey, '-inf', nowMs, 'WITHSCORES', 'LIMIT', offset, window);
        if (flat.length === 0) break;
        const entries: { member: string; score: number }[] = [];
        for (let i = 0; i < flat.length; i += 2) entries.push({ member: flat[i]!, score: Number(flat[i + 1]) });
        const values = await Promise.all(
          entries.map(({ member }) => {
            const [slug, webhookId, eventId] = member.split('|') as [string, string, string];
            return this.redis.hget(this.keys(slug).deliveries, `${webhookId}|${eventId}`);
          }),
        );
        // Entries that stay in the due range move the next window's offset; removed and rescored ones leave it.
        let stay = 0;
        for (const [i, { member, score }] of entries.entries()) {
          const [slug, webhookId, eventId] = member.split('|') as [string, string, string];
          const value = values[i]!;
          const record = value === null ? null : parseDelivery(slug, webhookId, eventId, value);
          if (record === null) {
            if (score < nowMs - ORPHAN_GRACE_MS) await this.redis.zrem(this.dueKey, member);
            else stay++;
          } else if (record.status !== 'pending' || record.next_attempt_at === null) {
            await this.redis.zrem(this.dueKey, member);
          } else if (record.next_attempt_at > nowMs) {
            await this.redis.conclaveRescoreDue(this.dueKey, member, score, record.next_attempt_at);
          } else {
            due.push(record);
            stay++;
          }
        }
        if (flat.length < window * 2) break;
        offset += stay;
      }
      // Index members of one score sort by name, not seq: order by due time and seq, then take turns again.
      const ordered = due.sort((a, b) => (a.next_attempt_at ?? 0) - (b.next_attempt_at ?? 0) || a.seq - b.seq);
      return takeTurns(ordered).slice(0, limit);
    });
  }

  /** The due index holds one entry per pending delivery. */
  pendingDeliveries(): Promise<number> {
    return this.calls.call(() => this.redis.zcard(this.dueKey));
  }

  nextDeliveryAt(): Promise<number | null> {
    return this.calls.call(async () => {
      const [, score] = await this.redis.zrange(this.dueKey, 0, 0, 'WITHSCORES');
      return score === undefined ? null : Number(score);
    });
  }

  async claimDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    leaseUntilMs: number,
  ): Promise<boolean> {
    const field = `${webhookId}|${eventId}`;
    const claimed = await this.calls.call(() =>
      this.redis.conclaveClaim(
        this.keys(slug).deliveries,
        this.keys(slug).webhooks,
        field,
        attempts,
        nowMs,
        leaseUntilMs,
      ),
    );
    if (claimed !== 1) return false;
    // The old score (<= now) would only make the entry look due early; dueDeliveries rescores it anyway.
    await this.calls.bestEffort(() => this.redis.zadd(this.dueKey, leaseUntilMs, dueMember(slug, webhookId, eventId)));
    return true;
  }

  async deferDelivery(
    slug: string,
    webhookId: string,
    eventId: string,
    attempts: number,
    nowMs: number,
    untilMs: number,
  ): Promise<boolean> {
    const field = `${webhookId}|${eventId}`;
    const deferred = await this.calls.call(() =>
      this.redis.conclaveDefer(this.keys(slug).deliveries, field, attempts, nowMs, untilMs),
    );
    if (deferred !== 1) return false;
    // A lost index update only makes the entry look due early; dueDeliveries rescores it.
    await this.calls.bestEffort(() => this.redis.zadd(this.dueKey, untilMs, dueMember(slug, webhookId, eventId)));
    return true;
  }

  async settleDelivery(slug: string, webhookId: string, eventId: string, outcome: DeliveryOutcome): Promise<void> {
    const keys = this.keys(slug);
    const member = dueMember(slug, webhookId, eventId);
    const failed = outcome.kind === 'exhausted' || outcome.kind === 'refused';
    // The settled index first (see the module comment): pruning finds the row once it is old enough.
    if (outcome.kind !== 'retry') await this.calls.call(() => this.redis.zadd(this.settledKey, outcome.at, member));
    const settled = await this.calls.call(() =>
      this.redis.conclaveSettle(
        keys.deliveries,
        keys.webhooks,
        `${webhookId}|${eventId}`,
        webhookId,
        outcome.kind,
        outcome.at,
        failed ? outcome.disableAfter : 0,
        failed ? outcome.reason : '',
      ),
    );
    if (settled !== 1) return;
    await this.calls.bestEffort(() =>
      outcome.kind === 'retry'
        ? this.redis.zadd(this.dueKey, outcome.at, member)
        : this.redis.zrem(this.dueKey, member),
    );
  }

  deliveries(slug: string, webhookId: string): Promise<DeliveryRecord[]> {
    return this.calls.call(async () => {
      const all = await this.redis.hgetall(this.keys(slug).deliveries);
      const prefix = `${webhookId}|`;
      return Object.entries(all)
        .filter(([field]) => field.startsWith(prefix))
        .map(([field, value]) => parseDelivery(slug, webhookId, field.slice(prefix.length), value))
        .sort((a, b) => a.seq - b.seq);
    });
  }

  /**
   * Writes a webhook and its deliveries exactly as another store held them (`conclave migrate`):
   * nothing that exists is overwritten, so a second import changes nothing. `different` when a
   * webhook of that id exists with other fixed fields (its URL, owner, events or secret).
   */
  async importWebhook(webhook: WebhookRecord, deliveries: DeliveryRecord[]): Promise<'created' | 'same' | 'different'> {
    const keys = this.keys(webhook.slug);
    const { cursor, failure_streak, refusal_streak, verified_at, disabled_at, disabled_reason } = webhook;
    const fixed = fixedPart(webhook);
    const existing = (await this.webhooks(webhook.slug)).find((w) => w.id === webhook.id);
    if (existing) {
      if (JSON.stringify(sortedKeys(fixedPart(existing))) !== JSON.stringify(sortedKeys(fixed))) return 'different';
    }
    // Indexes first (see the module comment), then the room's keys.
    await this.calls.call(() => this.redis.sadd(this.webhookRoomsKey, webhook.slug));
    await this.indexOrigin(webhook);
    const settled = deliveries.filter((d) => d.status !== 'pending');
    if (settled.length > 0) {
      // Settled before settle times were kept: as of the import.
      const scored = settled.flatMap((d) => [d.settled_at ?? Date.now(), dueMember(d.slug, d.webhook_id, d.event_id)]);
      await this.calls.call(() => this.redis.zadd(this.settledKey, 'NX', ...scored));
    }
    const pending = deliveries.filter((d) => d.status === 'pending' && d.next_attempt_at !== null);
    if (pending.length > 0) {
      const scored = pending.flatMap((d) => [d.next_attempt_at!, dueMember(d.slug, d.webhook_id, d.event_id)]);
      await this.calls.call(() => this.redis.zadd(this.dueKey, 'NX', ...scored));
    }
    await this.calls.call(async () => {
      const pipeline = this.redis.multi();
      pipeline.hsetnx(keys.webhooks, webhook.id, JSON.stringify(fixed));
      pipeline.hsetnx(keys.webhooks, `${webhook.id}:cursor`, cursor);
      pipeline.hsetnx(keys.webhooks, `${webhook.id}:streak`, failure_streak);
      pipeline.hsetnx(keys.webhooks, `${webhook.id}:refusals`, refusal_streak);
      if (verified_at !== null) pipeline.hsetnx(keys.webhooks, `${webhook.id}:verified_at`, verified_at);
      if (disabled_at !== null) pipeline.hsetnx(keys.webhooks, `${webhook.id}:disabled_at`, disabled_at);
      if (disabled_reason !== null) pipeline.hsetnx(keys.webhooks, `${webhook.id}:reason`, disabled_reason);
      for (const d of deliveries) {
        const time = d.status === 'pending' ? d.next_attempt_at : d.settled_at;
        const value = `${d.status} ${d.attempts} ${time ?? '-'} ${d.seq}`;
        pipeline.hsetnx(keys.deliveries, `${d.webhook_id}|${d.event_id}`, value);
      }
      await pipeline.exec();
    });
    return existing ? 'same' : 'created';
  }

  private keys(slug: string) {
    return engagementKeys(this.roomKey(slug));
  }
}
