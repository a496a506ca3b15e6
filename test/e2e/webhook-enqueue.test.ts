/**
 * Catching a room's subscriptions up reads its new events once for all of them, not once each: a room
 * may hold thousands of webhooks, and a read per subscription on every commit made each of that room's
 * commits cost thousands of queries on the process every room shares. Subscriptions registered at
 * different times (different cursors) and with different event filters each still get exactly their
 * events, once.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const PER_WAVE = 40;

describe('the webhook catch-up of a room with many subscriptions', () => {
  let svc: RunningService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    svc = await startService({
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_MAX_PER_SEAT: '100',
        WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: '100',
        WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS: '100',
      },
    });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await svc?.stop();
  });

  it('reads the events once per page for all of them, and each gets exactly its own', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Many subscribers' }, 1);
    const register = async (name: string, eventTypes: string[]) => {
      const registered = await call(svc.base, 'POST', `/api/rooms/${slug}/webhooks`, {
        token: tokens[0],
        body: { url: `${receiver.url}/${name}`, event_types: eventTypes },
      });
      expect(registered.status).toBe(200);
    };
    const post = async (body: string) => {
      const posted = await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[0], body: { body } });
      expect(posted.status).toBe(200);
    };
    // Each subscription's verification delivery, answered 200 (its consent), then its room events.
    const verifications = () => receiver.received.filter((r) => r.body.event.event_type === VERIFICATION_EVENT_TYPE);
    const events = () => receiver.received.filter((r) => r.body.event.event_type !== VERIFICATION_EVENT_TYPE);
    const received = (name: string) => events().filter((r) => r.url === `/hook/${name}`);

    // The first wave, half of it wanting every event, sees the first post; the second wave joins after.
    for (let i = 0; i < PER_WAVE; i++) await register(`first${i}`, i % 2 === 0 ? [] : ['discussion.posted']);
    await post('one');
    await eventually(() => events().length >= PER_WAVE, 5_000);
    for (let i = 0; i < PER_WAVE; i++) await register(`second${i}`, ['discussion.posted']);
    await eventually(() => verifications().length === 2 * PER_WAVE, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const reads = vi.spyOn(svc.service.store, 'events');
    try {
      await post('two');
      await eventually(() => events().length >= 3 * PER_WAVE, 5_000);
      // One page of new events and the empty read that ends the catch-up; other readers of the room
      // (none here) would add a few. One read per subscription would be 80.
      expect(reads.mock.calls.filter(([readSlug]) => readSlug === slug).length).toBeLessThanOrEqual(4);
    } finally {
      reads.mockRestore();
    }

    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < PER_WAVE; i++) {
      expect(received(`first${i}`).map((r) => r.body.event.data.body)).toEqual(['one', 'two']);
      expect(received(`second${i}`).map((r) => r.body.event.data.body)).toEqual(['two']);
    }
  }, 60_000);
});
