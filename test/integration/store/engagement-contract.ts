/**
 * The EngagementStore contract (store.engagement): opener-seal wake bookkeeping, webhook
 * subscriptions and the delivery outbox. Run against every adapter beside the RoomStore contract.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WebhookRecord } from '../../../src/store/engagement-port.js';
import type { RoomStore } from '../../../src/store/port.js';
import type { Backing, StoreTarget } from './contract.js';
import { event } from './contract.js';

const T = 1_800_000_000_000;

function webhook(slug: string, overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id: randomUUID(),
    slug,
    owner: 'participant:p1',
    url: 'https://hooks.example.com/conclave',
    event_types: [],
    secret: 'whsec_secret',
    created_at: T,
    disabled_at: null,
    disabled_reason: null,
    verified_at: null,
    cursor: 0,
    failure_streak: 0,
    refusal_streak: 0,
    idempotency: null,
    ...overrides,
  };
}

export function engagementContract(target: StoreTarget): void {
  let backing: Backing;
  let opened: RoomStore[];
  let store: RoomStore;

  async function openAnother(): Promise<RoomStore> {
    const another = await backing.open();
    opened.push(another);
    return another;
  }

  async function room(slug: string, events = 0): Promise<void> {
    const log = Array.from({ length: events }, (_, i) => event(i + 1));
    await store.commit({ slug, expected_version: 0, snapshot: '{}', events: log, receipts: [], next_deadline: null });
  }

  beforeEach(async () => {
    backing = await target.fresh();
    opened = [];
    store = await openAnother();
  });

  afterEach(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  describe('opener-seal wakes', () => {
    it('records consumption per participant, once', async () => {
      await room('wakes');
      const e = store.engagement;
      expect(await e.consumedOpenerWakes('wakes', 'p1')).toEqual([]);
      expect(await e.consumeOpenerWakes('wakes', 'p1', ['d1', 'd2'])).toBe(2);
      expect(await e.consumeOpenerWakes('wakes', 'p1', ['d2', 'd3'])).toBe(1);
      expect(await e.consumeOpenerWakes('wakes', 'p1', [])).toBe(0);
      expect((await e.consumedOpenerWakes('wakes', 'p1')).sort()).toEqual(['d1', 'd2', 'd3']);
      expect(await e.consumedOpenerWakes('wakes', 'p2')).toEqual([]);
    });

    it('lets exactly one of two racing consumers win', async () => {
      await room('race');
      const other = await openAnother();
      const wins = await Promise.all([
        store.engagement.consumeOpenerWakes('race', 'p1', ['d1']),
        other.engagement.consumeOpenerWakes('race', 'p1', ['d1']),
      ]);
      expect(wins.sort()).toEqual([0, 1]);
    });
  });

  describe('webhooks', () => {
    it('creates, lists oldest first, and disables idempotently', async () => {
      await room('hooks');
      const first = webhook('hooks', {
        event_types: ['decision.completed'],
        idempotency: { scope: 'hooks|h', fingerprint: '{}' },
      });
      const second = webhook('hooks', { created_at: T + 1, owner: 'operator', cursor: 7 });
      await store.engagement.createWebhook(second);
      await store.engagement.createWebhook(first);
      expect(await store.engagement.webhooks('hooks')).toEqual([first, second]);
      expect(await store.engagement.webhooks('other')).toEqual([]);

      const disabled = await store.engagement.disableWebhook('hooks', first.id, T + 10);
      expect(disabled).toEqual({ ...first, disabled_at: T + 10, disabled_reason: 'unregistered' });
      expect(await store.engagement.disableWebhook('hooks', first.id, T + 20)).toEqual(disabled);
      expect(await store.engagement.disableWebhook('hooks', randomUUID(), T)).toBeNull();
      expect(await store.engagement.disableWebhook('other', second.id, T)).toBeNull();
    });

    it('disables several at once, keeping the first disabling of any already disabled', async () => {
      await room('batch');
      const [a, b, c] = [0, 1, 2].map((i) => webhook('batch', { created_at: T + i }));
      for (const hook of [a!, b!, c!]) await store.engagement.createWebhook(hook);
      await store.engagement.disableWebhook('batch', a!.id, T + 5, 'gone');
      await store.engagement.disableWebhooks('batch', [a!.id, b!.id, randomUUID()], T + 10, 'owner_access_lost');
      await store.engagement.disableWebhooks('batch', [], T + 20, 'owner_access_lost');
      expect(await store.engagement.webhooks('batch')).toEqual([
        { ...a, disabled_at: T + 5, disabled_reason: 'gone' },
        { ...b, disabled_at: T + 10, disabled_reason: 'owner_access_lost' },
        c,
      ]);
    });

    it('lists the rooms that have active webhooks', async () => {
      await room('active');
      await room('inactive');
      await store.engagement.createWebhook(webhook('active'));
      const gone = webhook('inactive');
      await store.engagement.createWebhook(gone);
      await store.engagement.disableWebhook('inactive', gone.id, T);
      expect(await store.engagement.webhookRooms()).toEqual(['active']);
    });

    it('tells, where a commit reports it, whether the room had webhooks then', async () => {
      const commit = (slug: string) =>
        store.commit({ slug, expected_version: 1, snapshot: '{}', events: [], receipts: [], next_deadline: null });
      await room('plain');
      await room('watched');
      await store.engagement.createWebhook(webhook('watched'));
      // Absent means unknown (SQLite reads the subscriptions instead); Redis answers in the commit.
      for (const [slug, expected] of [
        ['plain', false],
        ['watched', true],
      ] as const) {
        const { subscribed } = await commit(slug);
        if (subscribed !== undefined) expect(subscribed).toBe(expected);
      }
    });
  });

  describe('delivery outbox', () => {
    async function subscribed(slug: string, events = 3): Promise<WebhookRecord> {
      await room(slug, events);
      const hook = webhook(slug);
      await store.engagement.createWebhook(hook);
      return hook;
    }

    it('enqueues with a compare-and-set cursor, exactly once across writers', async () => {
      const hook = await subscribed('outbox');
      const other = await openAnother();
      const drafts = (await store.events('outbox', 0, 10)).map((e) => ({ event_id: e.id, seq: e.seq }));
      const results = await Promise.all([
        store.engagement.enqueueDeliveries('outbox', hook.id, 0, 3, drafts, T),
        other.engagement.enqueueDeliveries('outbox', hook.id, 0, 3, drafts, T),
      ]);
      expect(results.sort()).toEqual([false, true]);
      expect((await store.engagement.webhooks('outbox'))[0]!.cursor).toBe(3);
      const deliveries = await store.engagement.deliveries('outbox', hook.id);
      expect(deliveries).toEqual(
        drafts.map((d) => ({
          slug: 'outbox',
          webhook_id: hook.id,
          event_id: d.event_id,
          seq: d.seq,
          status: 'pending',
          attempts: 0,
          next_attempt_at: T,
          settled_at: null,
        })),
      );
      // A cursor-only move (events the filter skipped) writes no delivery.
      expect(await store.engagement.enqueueDeliveries('outbox', hook.id, 3, 5, [], T)).toBe(true);
      expect(await store.engagement.enqueueDeliveries('outbox', hook.id, 3, 6, [], T)).toBe(false);
      expect((await store.engagement.webhooks('outbox'))[0]!.cursor).toBe(5);
    });

    it('refuses to enqueue for a disabled subscription', async () => {
      const hook = await subscribed('off');
      await store.engagement.disableWebhook('off', hook.id, T);
      const [first] = await store.events('off', 0, 1);
      expect(await store.engagement.enqueueDeliveries('off', hook.id, 0, 1, [{ event_id: first!.id, seq: 1 }], T)).toBe(
        false,
      );
      expect(await store.engagement.deliveries('off', hook.id)).toEqual([]);
      expect(await store.engagement.dueDeliveries(T + 1, 10)).toEqual([]);
    });

    it('lists due deliveries, claims each attempt once, and follows retries', async () => {
      const hook = await subscribed('due', 2);
      const [a, b] = await store.events('due', 0, 10);
      await store.engagement.enqueueDeliveries('due', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      await store.engagement.enqueueDeliveries('due', hook.id, 1, 2, [{ event_id: b!.id, seq: 2 }], T + 100);
      expect(await store.engagement.nextDeliveryAt()).toBe(T);
      expect(await store.engagement.pendingDeliveries()).toBe(2);
      expect((await store.engagement.dueDeliveries(T, 10)).map((d) => d.seq)).toEqual([1]);
      expect((await store.engagement.dueDeliveries(T + 100, 10)).map((d) => d.seq)).toEqual([1, 2]);
      expect((await store.engagement.dueDeliveries(T + 100, 1)).map((d) => d.seq)).toEqual([1]);

      const other = await openAnother();
      const claims = await Promise.all([
        store.engagement.claimDelivery('due', hook.id, a!.id, 0, T, T + 60_000),
        other.engagement.claimDelivery('due', hook.id, a!.id, 0, T, T + 60_000),
      ]);
      expect(claims.sort()).toEqual([false, true]);
      // Claimed: held by its lease, and the attempt is counted.
      expect((await store.engagement.dueDeliveries(T + 100, 10)).map((d) => d.seq)).toEqual([2]);
      expect(await store.engagement.claimDelivery('due', hook.id, a!.id, 1, T + 100, T + 60_100)).toBe(false);

      await store.engagement.settleDelivery('due', hook.id, a!.id, { kind: 'retry', at: T + 5_000 });
      const [retry] = await store.engagement.deliveries('due', hook.id);
      expect(retry).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: T + 5_000 });
      expect(await store.engagement.claimDelivery('due', hook.id, a!.id, 1, T + 4_999, T + 70_000)).toBe(false);
      expect(await store.engagement.claimDelivery('due', hook.id, a!.id, 1, T + 5_000, T + 70_000)).toBe(true);
      await store.engagement.settleDelivery('due', hook.id, a!.id, { kind: 'delivered', at: T + 5_001 });
      // Settling twice leaves the first outcome.
      await store.engagement.settleDelivery('due', hook.id, a!.id, { kind: 'retry', at: T });
      expect((await store.engagement.deliveries('due', hook.id))[0]).toMatchObject({
        status: 'delivered',
        attempts: 2,
        next_attempt_at: null,
        settled_at: T + 5_001,
      });
      expect(await store.engagement.nextDeliveryAt()).toBe(T + 100);
      expect(await store.engagement.pendingDeliveries()).toBe(1);
    });

    it('defers a due delivery once, across processes, without counting an attempt', async () => {
      const hook = await subscribed('parked', 1);
      const [a] = await store.events('parked', 0, 1);
      await store.engagement.enqueueDeliveries('parked', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      const other = await openAnother();
      const defers = await Promise.all([
        store.engagement.deferDelivery('parked', hook.id, a!.id, 0, T, T + 30_000),
        other.engagement.deferDelivery('parked', hook.id, a!.id, 0, T, T + 30_000),
      ]);
      // The second sees a delivery no longer due.
      expect(defers.sort()).toEqual([false, true]);
      expect((await store.engagement.deliveries('parked', hook.id))[0]).toMatchObject({
        status: 'pending',
        attempts: 0,
        next_attempt_at: T + 30_000,
      });
      expect(await store.engagement.dueDeliveries(T + 29_999, 10)).toEqual([]);
      expect(await store.engagement.nextDeliveryAt()).toBe(T + 30_000);
      // A claimed delivery is not deferred from under its attempt.
      expect(await store.engagement.claimDelivery('parked', hook.id, a!.id, 0, T + 30_000, T + 90_000)).toBe(true);
      expect(await store.engagement.deferDelivery('parked', hook.id, a!.id, 1, T + 30_000, T + 60_000)).toBe(false);
      expect(await store.engagement.deferDelivery('parked', hook.id, a!.id, 0, T + 90_000, T + 120_000)).toBe(false);
    });

    it("lists due deliveries with the rooms taking turns, so one room's backlog hides no other room", async () => {
      const busy = await subscribed('busy', 5);
      const quiet = await subscribed('quiet', 1);
      const drafts = (await store.events('busy', 0, 10)).map((e) => ({ event_id: e.id, seq: e.seq }));
      await store.engagement.enqueueDeliveries('busy', busy.id, 0, 5, drafts, T);
      const [q] = await store.events('quiet', 0, 1);
      await store.engagement.enqueueDeliveries('quiet', quiet.id, 0, 1, [{ event_id: q!.id, seq: 1 }], T + 50);
      const turns = (await store.engagement.dueDeliveries(T + 100, 3)).map((d) => `${d.slug}:${d.seq}`);
      expect(turns).toEqual(['busy:1', 'quiet:1', 'busy:2']);
      expect(await store.engagement.dueDeliveries(T + 100, 10)).toHaveLength(6);
    });

    it('makes an unsettled claim due again when its lease runs out', async () => {
      const hook = await subscribed('lease', 1);
      const [a] = await store.events('lease', 0, 1);
      await store.engagement.enqueueDeliveries('lease', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      expect(await store.engagement.claimDelivery('lease', hook.id, a!.id, 0, T, T + 60_000)).toBe(true);
      expect(await store.engagement.dueDeliveries(T + 59_999, 10)).toEqual([]);
      expect(await store.engagement.dueDeliveries(T + 60_000, 10)).toMatchObject([{ attempts: 1 }]);
      expect(await store.engagement.claimDelivery('lease', hook.id, a!.id, 1, T + 60_000, T + 120_000)).toBe(true);
    });

    it('disables a subscription after consecutive exhausted events; a success resets the streak', async () => {
      const hook = await subscribed('streak', 4);
      const events = await store.events('streak', 0, 10);
      const drafts = events.map((e) => ({ event_id: e.id, seq: e.seq }));
      await store.engagement.enqueueDeliveries('streak', hook.id, 0, 4, drafts, T);
      const settle = async (i: number, kind: 'delivered' | 'exhausted') => {
        expect(await store.engagement.claimDelivery('streak', hook.id, events[i]!.id, 0, T, T + 1)).toBe(true);
        await store.engagement.settleDelivery(
          'streak',
          hook.id,
          events[i]!.id,
          kind === 'exhausted' ? { kind, at: T + i, disableAfter: 2, reason: 'exhausted' } : { kind, at: T + i },
        );
      };
      await settle(0, 'exhausted');
      await settle(1, 'delivered');
      await settle(2, 'exhausted');
      expect((await store.engagement.webhooks('streak'))[0]).toMatchObject({ failure_streak: 1, disabled_at: null });
      await settle(3, 'exhausted');
      expect((await store.engagement.webhooks('streak'))[0]).toMatchObject({
        failure_streak: 2,
        disabled_at: T + 3,
        disabled_reason: 'exhausted',
      });
      expect((await store.engagement.deliveries('streak', hook.id)).map((d) => d.status)).toEqual([
        'exhausted',
        'delivered',
        'exhausted',
        'exhausted',
      ]);
    });

    it('verifies a subscription on a verified delivery, and disables it on refusals in a row', async () => {
      const hook = await subscribed('consent', 3);
      const events = await store.events('consent', 0, 10);
      await store.engagement.enqueueDeliveries('consent', hook.id, 0, 0, [{ event_id: hook.id, seq: 0 }], T);
      // Enqueued again (another process, a restart): nothing changes.
      await store.engagement.enqueueDeliveries('consent', hook.id, 0, 0, [{ event_id: hook.id, seq: 0 }], T + 9);
      expect(await store.engagement.deliveries('consent', hook.id)).toMatchObject([{ seq: 0, next_attempt_at: T }]);
      expect(await store.engagement.claimDelivery('consent', hook.id, hook.id, 0, T, T + 1)).toBe(true);
      await store.engagement.settleDelivery('consent', hook.id, hook.id, { kind: 'verified', at: T + 1 });
      expect((await store.engagement.webhooks('consent'))[0]).toMatchObject({ verified_at: T + 1, cursor: 0 });
      const drafts = events.map((e) => ({ event_id: e.id, seq: e.seq }));
      expect(await store.engagement.enqueueDeliveries('consent', hook.id, 0, 3, drafts, T + 2)).toBe(true);
      const refuse = async (i: number) => {
        expect(await store.engagement.claimDelivery('consent', hook.id, events[i]!.id, 0, T + 2, T + 3)).toBe(true);
        const outcome = { kind: 'refused', at: T + 10 + i, disableAfter: 2, reason: 'refused' } as const;
        await store.engagement.settleDelivery('consent', hook.id, events[i]!.id, outcome);
      };
      await refuse(0);
      expect((await store.engagement.webhooks('consent'))[0]).toMatchObject({ refusal_streak: 1, disabled_at: null });
      await refuse(1);
      expect((await store.engagement.webhooks('consent'))[0]).toMatchObject({
        refusal_streak: 2,
        disabled_at: T + 11,
        disabled_reason: 'refused',
        verified_at: T + 1,
      });
      expect((await store.engagement.deliveries('consent', hook.id)).map((d) => [d.status, d.settled_at])).toEqual([
        ['delivered', T + 1],
        ['refused', T + 10],
        ['refused', T + 11],
        ['pending', null],
      ]);
    });

    it('removes settled deliveries older than asked, never pending ones', async () => {
      const hook = await subscribed('pruned', 3);
      const events = await store.events('pruned', 0, 10);
      const drafts = events.map((e) => ({ event_id: e.id, seq: e.seq }));
      await store.engagement.enqueueDeliveries('pruned', hook.id, 0, 3, drafts, T);
      await store.engagement.settleDelivery('pruned', hook.id, events[0]!.id, { kind: 'delivered', at: T + 10 });
      await store.engagement.settleDelivery('pruned', hook.id, events[1]!.id, { kind: 'dropped', at: T + 20 });
      expect(await store.engagement.pruneSettledDeliveries(T + 10, 100)).toBe(0);
      expect(await store.engagement.pruneSettledDeliveries(T + 11, 100)).toBe(1);
      expect((await store.engagement.deliveries('pruned', hook.id)).map((d) => d.seq)).toEqual([2, 3]);
      expect(await store.engagement.pruneSettledDeliveries(T + 1_000_000, 100)).toBe(1);
      expect((await store.engagement.deliveries('pruned', hook.id)).map((d) => d.status)).toEqual(['pending']);
      expect(await store.engagement.pendingDeliveries()).toBe(1);
    });

    it('counts the active subscriptions of a receiving origin across rooms', async () => {
      await room('origin-a');
      await room('origin-b');
      const a = webhook('origin-a', { url: 'https://hooks.example.com:8443/a' });
      await store.engagement.createWebhook(a);
      await store.engagement.createWebhook(webhook('origin-b', { url: 'https://hooks.example.com:8443/b' }));
      await store.engagement.createWebhook(webhook('origin-b', { url: 'https://hooks.example.com/c' }));
      expect(await store.engagement.originFull('https://hooks.example.com:8443', 2)).toBe(true);
      expect(await store.engagement.originFull('https://hooks.example.com:8443', 3)).toBe(false);
      await store.engagement.disableWebhook('origin-a', a.id, T, 'unregistered');
      expect(await store.engagement.originFull('https://hooks.example.com:8443', 2)).toBe(false);
      expect(await store.engagement.originFull('https://hooks.example.com:8443', 1)).toBe(true);
      expect(await store.engagement.originFull('https://hooks.example.com', 1)).toBe(true);
      expect(await store.engagement.originFull('https://hooks.example.com', 2)).toBe(false);
      expect((await store.engagement.webhooks('origin-a'))[0]).toMatchObject({ disabled_reason: 'unregistered' });
    });

    it("counts one client's active subscriptions of a receiving origin awaiting consent across rooms, and keeps who registered", async () => {
      await room('client-a');
      await room('client-b');
      const origin = 'https://relay.example.com';
      const a = webhook('client-a', { url: `${origin}/a`, client: 'c1' });
      await store.engagement.createWebhook(a);
      await store.engagement.createWebhook(webhook('client-b', { url: `${origin}/b`, client: 'c1' }));
      await store.engagement.createWebhook(webhook('client-b', { url: `${origin}/c`, client: 'c2' }));
      await store.engagement.createWebhook(webhook('client-b', { url: 'https://other.example.com/d', client: 'c1' }));
      // Stored before the share existed: counts for the origin, for no client.
      await store.engagement.createWebhook(webhook('client-b', { url: `${origin}/e` }));
      // Consented to by its receiver (a 2xx to its verification delivery): counts for the origin, not
      // for the client's share.
      const consented = webhook('client-b', { url: `${origin}/f`, client: 'c1' });
      await store.engagement.createWebhook(consented);
      const verification = [{ event_id: consented.id, seq: 0 }];
      await store.engagement.enqueueDeliveries('client-b', consented.id, 0, 0, verification, T);
      expect(await store.engagement.claimDelivery('client-b', consented.id, consented.id, 0, T, T + 1)).toBe(true);
      await store.engagement.settleDelivery('client-b', consented.id, consented.id, { kind: 'verified', at: T + 1 });
      expect(await store.engagement.originHeldBy(origin, 'c1', 2)).toBe(true);
      expect(await store.engagement.originHeldBy(origin, 'c1', 3)).toBe(false);
      expect(await store.engagement.originHeldBy(origin, 'c2', 2)).toBe(false);
      expect(await store.engagement.originFull(origin, 5)).toBe(true);
      await store.engagement.disableWebhook('client-a', a.id, T, 'unregistered');
      expect(await store.engagement.originHeldBy(origin, 'c1', 2)).toBe(false);
      expect(await store.engagement.originHeldBy(origin, 'c1', 1)).toBe(true);
      const kept = new Map((await store.engagement.webhooks('client-b')).map((w) => [w.url, w.client ?? null]));
      expect(Object.fromEntries(kept)).toEqual({
        [`${origin}/b`]: 'c1',
        [`${origin}/c`]: 'c2',
        'https://other.example.com/d': 'c1',
        [`${origin}/e`]: null,
        [`${origin}/f`]: 'c1',
      });
    });

    it('drops a delivery for good', async () => {
      const hook = await subscribed('drop', 1);
      const [a] = await store.events('drop', 0, 1);
      await store.engagement.enqueueDeliveries('drop', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      await store.engagement.settleDelivery('drop', hook.id, a!.id, { kind: 'dropped', at: T });
      expect(await store.engagement.dueDeliveries(T + 1, 10)).toEqual([]);
      expect(await store.engagement.nextDeliveryAt()).toBeNull();
      expect(await store.engagement.pendingDeliveries()).toBe(0);
    });

    it('goes with the room', async () => {
      const hook = await subscribed('deleted', 1);
      const [a] = await store.events('deleted', 0, 1);
      await store.engagement.enqueueDeliveries('deleted', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      await store.engagement.consumeOpenerWakes('deleted', 'p1', ['d1']);
      await store.deleteRoom('deleted');
      expect(await store.engagement.webhooks('deleted')).toEqual([]);
      expect(await store.engagement.deliveries('deleted', hook.id)).toEqual([]);
      expect(await store.engagement.consumedOpenerWakes('deleted', 'p1')).toEqual([]);
      expect(await store.engagement.dueDeliveries(T + 1, 10)).toEqual([]);
      expect(await store.engagement.webhookRooms()).toEqual([]);
    });

    it('keeps the outbox across close and reopen', async () => {
      const hook = await subscribed('kept', 1);
      const [a] = await store.events('kept', 0, 1);
      await store.engagement.enqueueDeliveries('kept', hook.id, 0, 1, [{ event_id: a!.id, seq: 1 }], T);
      await store.close();
      const reopened = await openAnother();
      expect(await reopened.engagement.webhooks('kept')).toEqual([{ ...hook, cursor: 1 }]);
      expect(await reopened.engagement.dueDeliveries(T, 10)).toMatchObject([{ event_id: a!.id, attempts: 0 }]);
    });
  });
}
