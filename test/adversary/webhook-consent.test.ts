/**
 * Webhooks nobody asked for are not sent (docs/agents.md, Webhooks: consent).
 *
 * The attack: a seat registers hundreds of webhooks at a receiver that never asked for them, and every
 * room event is POSTed to each of them, retried for a day and a half; 404 and 410 never stop them. The
 * defence under test: before any room event, one small signed verification delivery goes to each new
 * subscription, and only a 2xx to it lets room events follow; a redirect, a 4xx or no answer disables
 * it; a 404/410 later disables it at once and other refusals in a row soon after; registration is
 * limited per seat and per receiving origin; settled delivery rows are removed after a bounded time.
 *
 * Both stores (SQLite and Redis), with the manual clock, over real HTTP to loopback receivers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LANE_LIMITS } from '../../src/engagement/webhook-lanes.js';
import { DISABLE_AFTER_REFUSALS, VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { verifySignature } from '../../src/engagement/webhook-signing.js';
import { SETTLED_DELIVERY_RETENTION_MS } from '../../src/engagement/webhook-worker.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { startRedisServer, storeMatrix } from '../support/redis-server.js';
import { call, type RunningService, startService } from '../support/service.js';
import { type ReceivedWebhook, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The registration limits are set out of the way where a test is about what happens after it. */
const UNLIMITED = {
  WEBHOOK_MAX_PER_SEAT: '2000',
  WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: '2000',
  WEBHOOK_MAX_PER_ORIGIN: '100000',
};

const redis = await startRedisServer();

const STORES = storeMatrix(redis, 'webhook-consent');

afterAll(async () => {
  await redis?.stop();
});

const isVerification = (r: ReceivedWebhook) => r.body.event.event_type === VERIFICATION_EVENT_TYPE;
const roomEvents = (received: ReceivedWebhook[]) => received.filter((r) => !isVerification(r));

describe.each(STORES)('webhook consent ($store)', ({ store, env }) => {
  const skip = store === 'redis' && redis === null;
  const clock = new ManualClock(T0);
  let receiver: WebhookReceiver;
  const running: RunningService[] = [];

  const start = async (extra: Record<string, string> = UNLIMITED) => {
    const svc = await startService({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', ...env(), ...extra } });
    running.push(svc);
    return svc;
  };
  const register = (svc: RunningService, slug: string, token: string, url: string) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/webhooks`, { token, body: { url } });
  const post = async (svc: RunningService, slug: string, token: string, body: string) => {
    expect((await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token, body: { body } })).status).toBe(200);
  };
  /** Runs the outbox until nothing due now is left, the clock moved on by each step. */
  const drive = async (svc: RunningService, steps: number[]) => {
    await svc.service.engagement.webhooks.runDue();
    for (const step of steps) {
      clock.advance(step);
      await svc.service.engagement.webhooks.runDue();
    }
  };

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const svc of running.splice(0)) await svc.stop().catch(() => undefined);
    receiver.received.length = 0;
    receiver.status = 200;
    clock.set(T0);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it.skipIf(skip)(
    '300 webhooks to a receiver that answers 404: no room event reaches it, one verification each',
    async () => {
      const svc = await start();
      receiver.status = 404;
      const { slug, tokens } = await seatedRoom(svc.base, { about: 'Amplifier' }, 1);
      const ids: string[] = [];
      for (let i = 0; i < 300; i += 25) {
        const batch = await Promise.all(
          Array.from({ length: 25 }, (_, j) => register(svc, slug, tokens[0]!, `${receiver.url}/victim${i + j}`)),
        );
        for (const registered of batch) {
          expect(registered.status).toBe(200);
          ids.push(registered.body.webhook_id);
        }
      }
      for (let i = 0; i < 3; i++) await post(svc, slug, tokens[0]!, `payload ${i} ${'x'.repeat(10_000)}`);
      await drive(svc, [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR]);

      expect(roomEvents(receiver.received)).toHaveLength(0);
      const perHook = new Map<string, number>();
      for (const r of receiver.received) perHook.set(r.url, (perHook.get(r.url) ?? 0) + 1);
      expect(Math.max(...perHook.values())).toBe(1);
      // Each verification is small and carries nothing of the room.
      for (const r of receiver.received) {
        expect(r.raw.length).toBeLessThan(400);
        expect(r.raw).not.toContain('payload');
      }
      const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
      expect(listed.body.webhooks).toHaveLength(300);
      for (const hook of listed.body.webhooks) {
        expect(hook.disabled_at).not.toBeNull();
        expect(hook.disabled_reason).toBe('verification_refused');
        expect(hook.verified_at).toBeNull();
      }
      // Nothing of the room was queued for them.
      const engagement = svc.service.store.engagement;
      const rows = (await Promise.all(ids.map((id) => engagement.deliveries(slug, id)))).flat();
      expect(rows.every((d) => d.seq === 0)).toBe(true);
    },
    120_000,
  );

  it.skipIf(skip)('a receiver that consented and later answers 410 is disabled within 3 attempts', async () => {
    const svc = await start();
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Gone' }, 1);
    const registered = await register(svc, slug, tokens[0]!, receiver.url);
    await eventually(() => receiver.received.length === 1);
    await drive(svc, []);
    receiver.status = 410;
    for (let i = 0; i < 5; i++) await post(svc, slug, tokens[0]!, `after ${i}`);
    await drive(svc, [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR]);
    expect(roomEvents(receiver.received).length).toBeGreaterThanOrEqual(1);
    expect(roomEvents(receiver.received).length).toBeLessThanOrEqual(3);
    const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    expect(listed.body.webhooks[0]).toMatchObject({
      id: registered.body.webhook_id,
      disabled_reason: 'gone',
      verified_at: new Date(T0).toISOString(),
    });
    expect(listed.body.webhooks[0].disabled_at).not.toBeNull();
  });

  it.skipIf(skip)('a run of refusals (403) disables a consented subscription after 3 of them', async () => {
    const svc = await start();
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Refused' }, 1);
    await register(svc, slug, tokens[0]!, receiver.url);
    await eventually(() => receiver.received.length === 1);
    await drive(svc, []);
    receiver.status = 403;
    for (let i = 0; i < 6; i++) await post(svc, slug, tokens[0]!, `refused ${i}`);
    await drive(svc, [5 * SECOND, 5 * MINUTE, 30 * MINUTE]);
    // The third refusal disables it; attempts already in flight to that URL beside it (a process sends
    // at most LANE_LIMITS.perEndpoint at once) may still have gone.
    const refused = roomEvents(receiver.received).length;
    expect(refused).toBeGreaterThanOrEqual(DISABLE_AFTER_REFUSALS);
    expect(refused).toBeLessThanOrEqual(DISABLE_AFTER_REFUSALS + LANE_LIMITS.perEndpoint - 1);
    const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    expect(listed.body.webhooks[0].disabled_reason).toBe('refused');
    // Nothing more goes to it.
    receiver.status = 200;
    await post(svc, slug, tokens[0]!, 'after the refusals');
    await drive(svc, [HOUR]);
    expect(roomEvents(receiver.received)).toHaveLength(refused);
  });

  it.skipIf(skip)('a receiver written to the protocol (2xx to every signed POST) gets every event', async () => {
    const svc = await start();
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Protocol receiver' }, 1);
    const registered = await register(svc, slug, tokens[0]!, receiver.url);
    const secret = registered.body.signing_secret as string;
    // Committed before the receiver could have answered the verification: delivered once it has.
    await post(svc, slug, tokens[0]!, 'early');
    await eventually(() => receiver.received.length >= 1);
    for (let i = 0; i < 3; i++) await post(svc, slug, tokens[0]!, `m${i}`);
    await eventually(() => roomEvents(receiver.received).length === 4);
    await drive(svc, []);
    const [verification, ...rest] = receiver.received;
    expect(isVerification(verification!)).toBe(true);
    expect(verification!.body).toEqual({
      slug,
      event: {
        id: registered.body.webhook_id,
        seq: 0,
        event_type: VERIFICATION_EVENT_TYPE,
        occurred_at: new Date(T0).toISOString(),
        decision_id: null,
        data: { webhook_id: registered.body.webhook_id },
      },
    });
    for (const r of receiver.received) {
      expect(verifySignature(secret, String(r.headers['webhook-signature']), r.raw, Math.floor(T0 / 1000))).toBe(true);
      expect(r.headers['webhook-id']).toBe(r.body.event.id);
    }
    expect(rest.map((r) => r.body.event.data.body)).toEqual(['early', 'm0', 'm1', 'm2']);
    const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    expect(listed.body.webhooks[0]).toMatchObject({ disabled_at: null, disabled_reason: null });
    expect(listed.body.webhooks[0].verified_at).toBe(new Date(T0).toISOString());
  });

  it.skipIf(skip)('settled delivery rows are removed once the retention time has passed', async () => {
    const svc = await start();
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Pruned' }, 1);
    const registered = await register(svc, slug, tokens[0]!, receiver.url);
    const id = registered.body.webhook_id as string;
    await eventually(() => receiver.received.length === 1);
    for (let i = 0; i < 3; i++) await post(svc, slug, tokens[0]!, `kept a while ${i}`);
    await eventually(() => roomEvents(receiver.received).length === 3);
    await drive(svc, []);
    const engagement = svc.service.store.engagement;
    expect((await engagement.deliveries(slug, id)).map((d) => d.status)).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'delivered',
    ]);
    // A pending one (its receiver failing) is kept however old it is.
    receiver.status = 503;
    await post(svc, slug, tokens[0]!, 'still owed');
    await drive(svc, []);

    clock.advance(SETTLED_DELIVERY_RETENTION_MS - MINUTE);
    await svc.service.engagement.webhooks.sweep();
    expect(await engagement.deliveries(slug, id)).toHaveLength(5);
    clock.advance(2 * MINUTE);
    await svc.service.engagement.webhooks.sweep();
    const left = await engagement.deliveries(slug, id);
    expect(left.map((d) => d.status)).toEqual(['pending']);
  });
});

describe.each(STORES)('webhook registration limits ($store)', ({ store, env }) => {
  const skip = store === 'redis' && redis === null;
  let svc: RunningService;
  beforeAll(async () => {
    if (skip) return;
    svc = await startService({
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        ...env(),
        WEBHOOK_MAX_PER_SEAT: '3',
        WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: '4',
        WEBHOOK_MAX_PER_ORIGIN: '6',
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });
  const register = (slug: string, token: string, url: string) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/webhooks`, { token, body: { url } });

  it.skipIf(skip)('refuses past the per-seat, per-origin-in-room and per-origin limits, actionably', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Limits' }, 3);
    for (let i = 0; i < 3; i++) expect((await register(slug, tokens[0]!, `http://127.0.0.1:9/a${i}`)).status).toBe(200);
    const seat = await register(slug, tokens[0]!, 'http://127.0.0.2:9/other');
    expect(seat.status).toBe(400);
    expect(seat.body.error).toMatchObject({
      code: 'input.invalid',
      details: { reason: 'webhook_seat_cap_reached', cap: 3 },
    });
    expect(seat.body.error.message).toMatch(/DELETE \/api\/rooms\//);

    // Another seat, same origin: the room's per-origin limit (4) is next.
    expect((await register(slug, tokens[1]!, 'http://127.0.0.1:9/b0')).status).toBe(200);
    const origin = await register(slug, tokens[1]!, 'http://127.0.0.1:9/b1');
    expect(origin.status).toBe(400);
    expect(origin.body.error.details).toMatchObject({ reason: 'webhook_origin_cap_reached', cap: 4 });
    expect((await register(slug, tokens[1]!, 'http://127.0.0.2:9/b1')).status).toBe(200);

    // Across rooms, one origin holds at most 6 active subscriptions of the service.
    const other = await seatedRoom(svc.base, { about: 'Limits elsewhere' }, 1);
    expect((await register(other.slug, other.tokens[0]!, 'http://127.0.0.1:9/c0')).status).toBe(200);
    expect((await register(other.slug, other.tokens[0]!, 'http://127.0.0.1:9/c1')).status).toBe(200);
    const service = await register(other.slug, other.tokens[0]!, 'http://127.0.0.1:9/c2');
    expect(service.status).toBe(400);
    expect(service.body.error.details).toMatchObject({ reason: 'webhook_origin_cap_reached', cap: 6 });

    // Unregistering frees the seat's slot.
    const mine = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    await call(svc.base, 'DELETE', `/api/rooms/${slug}/webhooks/${mine.body.webhooks[0].id}`, { token: tokens[0] });
    expect((await register(slug, tokens[0]!, 'http://127.0.0.3:9/again')).status).toBe(200);
    const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    expect(listed.body.webhooks[0].disabled_reason).toBe('unregistered');
  });
});
