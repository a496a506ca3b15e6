/**
 * Webhooks (06 §7) over real HTTP with a loopback receiver: registration rules, signed deliveries,
 * retries on the backoff schedule under a manual clock, a restart mid-backoff, recovery of enqueues
 * a crash skipped, and automatic disabling.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/engagement/webhook-signing.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { type ReceivedWebhook, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const LOOPBACK = { WEBHOOK_ALLOW_PRIVATE: 'true' };
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function verifyAll(received: ReceivedWebhook[], secret: string, clock: ManualClock): void {
  for (const hook of received) {
    const signature = String(hook.headers['webhook-signature']);
    const timestamp = String(hook.headers['webhook-timestamp']);
    expect(signature.startsWith(`t=${timestamp},v1=`)).toBe(true);
    expect(verifySignature(secret, signature, hook.raw, Math.floor(clock.now() / 1000))).toBe(true);
    expect(hook.headers['webhook-id']).toBe(hook.body.event.id);
  }
}

function seqsOf(receiver: WebhookReceiver): number[] {
  const unique = new Map(receiver.received.map((r) => [r.body.event.id, r.body.event.seq as number]));
  return [...unique.values()].sort((a, b) => a - b);
}

describe('webhook registration', () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ env: { CONCLAVE_ADMIN_TOKEN: 'admin-token-admin-token-admin-token-0' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  const hooks = (slug: string) => `/api/rooms/${slug}/webhooks`;

  it('registers, lists its own, and unregisters idempotently', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Hooks' }, 3);
    const registered = await call(svc.base, 'POST', hooks(slug), {
      token: tokens[1],
      body: { url: 'http://93.184.215.14/hook', event_types: ['decision.completed'] },
    });
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({
      ok: true,
      url: 'http://93.184.215.14/hook',
      event_types: ['decision.completed'],
    });
    expect(registered.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const id = registered.body.webhook_id;
    await call(svc.base, 'POST', hooks(slug), { token: tokens[2], body: { url: 'http://93.184.215.14/other' } });

    const own = await call(svc.base, 'GET', hooks(slug), { token: tokens[1] });
    expect(own.body).toEqual({
      slug,
      webhooks: [
        {
          id,
          url: 'http://93.184.215.14/hook',
          event_types: ['decision.completed'],
          created_at: expect.any(String),
          disabled_at: null,
          disabled_reason: null,
          verified_at: null,
        },
      ],
    });
    expect(JSON.stringify(own.body)).not.toContain('whsec_');
    const creator = await call(svc.base, 'GET', hooks(slug), { token: tokens[0] });
    expect(creator.body.webhooks).toHaveLength(2);
    const admin = await call(svc.base, 'GET', hooks(slug), { token: 'admin-token-admin-token-admin-token-0' });
    expect(admin.body.webhooks).toHaveLength(2);

    const denied = await call(svc.base, 'DELETE', `${hooks(slug)}/${id}`, { token: tokens[2] });
    expect(denied.status).toBe(403);
    for (let i = 0; i < 2; i++) {
      const removed = await call(svc.base, 'DELETE', `${hooks(slug)}/${id}`, { token: tokens[1] });
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ ok: true });
    }
    const after = await call(svc.base, 'GET', hooks(slug), { token: tokens[1] });
    expect(after.body.webhooks[0].disabled_at).toEqual(expect.any(String));
    const byOperator = await call(svc.base, 'DELETE', `${hooks(slug)}/${creator.body.webhooks[1].id}`, {
      token: tokens[0],
    });
    expect(byOperator.body).toEqual({ ok: true });

    const unknown = await call(svc.base, 'DELETE', `${hooks(slug)}/00000000-0000-4000-8000-000000000000`, {
      token: tokens[1],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('vendor:conclave:not_found');
    for (const method of ['GET', 'POST', 'DELETE']) {
      const path = method === 'DELETE' ? `${hooks('nosuchroom')}/x` : hooks('nosuchroom');
      const missing = await call(svc.base, method, path, {
        token: tokens[1],
        ...(method === 'POST' ? { body: { url: 'http://93.184.215.14/' } } : {}),
      });
      expect(missing.status, method).toBe(404);
      expect(missing.body.error.code).toBe('room.not_found');
    }
  });

  it('replays a registration sent again with the same Idempotency-Key', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Again' }, 1);
    const send = (url: string) =>
      call(svc.base, 'POST', hooks(slug), { token: tokens[0], body: { url }, headers: { 'idempotency-key': 'k-1' } });
    const first = await send('http://93.184.215.14/a');
    const again = await send('http://93.184.215.14/a');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await send('http://93.184.215.14/b')).body.error.code).toBe('idempotency.conflict');
    expect((await call(svc.base, 'GET', hooks(slug), { token: tokens[0] })).body.webhooks).toHaveLength(1);
  });

  it('rejects unsafe or malformed URLs, unknown event types and anonymous callers', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Guarded', config: { visibility: 'public' } }, 1);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[fd00::1]/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://user:pass@93.184.215.14/',
      'ftp://93.184.215.14/',
      'not a url',
      `http://93.184.215.14/${'x'.repeat(2048)}`,
    ]) {
      const refused = await call(svc.base, 'POST', hooks(slug), { token: tokens[0], body: { url } });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.details.reason, url).toBe('webhook_url_rejected');
    }
    const badType = await call(svc.base, 'POST', hooks(slug), {
      token: tokens[0],
      body: { url: 'http://93.184.215.14/', event_types: ['vote.tallied'] },
    });
    expect(badType.status).toBe(400);
    expect(badType.body.error.code).toBe('input.invalid');
    const anonymous = await call(svc.base, 'POST', hooks(slug), { body: { url: 'http://93.184.215.14/' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('auth.required');
  });
});

describe('webhook delivery', () => {
  const clock = new ManualClock(T0);
  let receiver: WebhookReceiver;
  const running: RunningService[] = [];
  const start = async (dataDir?: string) => {
    const svc = await startService({ clock, env: LOOPBACK, ...(dataDir ? { dataDir } : {}) });
    running.push(svc);
    return svc;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const svc of running.splice(0)) await svc.stop().catch(() => undefined);
    receiver.received.length = 0;
    receiver.status = 200;
    await receiver.up().catch(() => undefined);
    clock.set(T0);
  });
  afterAll(async () => {
    await receiver.close();
  });

  const DECIDING_ROOM = {
    question: 'Ship it?',
    options: ['yes', 'no'],
    config: { early_close: true, settle_window: 0 },
  };

  async function subscribe(svc: RunningService, roomBody: Record<string, unknown> = DECIDING_ROOM) {
    const room = await seatedRoom(svc.base, roomBody, 2);
    const registered = await call(svc.base, 'POST', `/api/rooms/${room.slug}/webhooks`, {
      token: room.tokens[0],
      body: { url: receiver.url },
    });
    expect(registered.status).toBe(200);
    const id = registered.body.webhook_id as string;
    await consented(svc, id);
    return { ...room, id, secret: registered.body.signing_secret as string };
  }

  /** Waits for the receiver's answer to a subscription's verification delivery, then forgets it. */
  async function consented(svc: RunningService, id: string) {
    await eventually(() => receiver.received.some((r) => r.body.event.id === id));
    await svc.service.engagement.webhooks.runDue();
    receiver.received.splice(0, receiver.received.length, ...receiver.received.filter((r) => r.body.event.id !== id));
  }

  /** A subscription's deliveries of room events (its verification delivery, seq 0, left out). */
  async function roomDeliveries(svc: RunningService, slug: string, id: string) {
    return (await svc.service.store.engagement.deliveries(slug, id)).filter((d) => d.seq > 0);
  }

  /** Waits until the immediate attempts after the commits have been made and settled. */
  async function attempted(svc: RunningService, slug: string, id: string, count: number) {
    await eventually(async () => {
      const deliveries = await roomDeliveries(svc, slug, id);
      return deliveries.length === count && deliveries.every((d) => d.attempts >= 1 || d.status !== 'pending');
    });
    // The run that claimed them is still in flight: joining it waits for their outcomes.
    await svc.service.engagement.webhooks.runDue();
  }

  it('delivers each event, signed, to a loopback receiver, honouring the event_types filter', async () => {
    const svc = await start();
    const all = await subscribe(svc);
    const completedOnly = await call(svc.base, 'POST', `/api/rooms/${all.slug}/webhooks`, {
      token: all.tokens[1],
      body: { url: `${receiver.url}?only=completed`, event_types: ['decision.completed'] },
    });
    await consented(svc, completedOnly.body.webhook_id);
    await call(svc.base, 'POST', `/api/rooms/${all.slug}/discuss`, { token: all.tokens[1], body: { body: 'yes!' } });
    await call(svc.base, 'POST', `/api/rooms/${all.slug}/choose`, { token: all.tokens[0], body: { choice: 'yes' } });
    await call(svc.base, 'POST', `/api/rooms/${all.slug}/choose`, { token: all.tokens[1], body: { choice: 'yes' } });
    // The discussion, two choices and the completion to the first; the completion alone to the second.
    await eventually(() => receiver.received.length === 5);
    const toAll = receiver.received.filter((r) => r.url === '/hook');
    const filtered = receiver.received.filter((r) => r.url === '/hook?only=completed');
    expect(toAll.map((r) => r.body.event.event_type).sort()).toEqual([
      'decision.completed',
      'discussion.posted',
      'vote.cast',
      'vote.cast',
    ]);
    expect(filtered.map((r) => r.body.event.event_type)).toEqual(['decision.completed']);
    verifyAll(toAll, all.secret, clock);
    verifyAll(filtered, completedOnly.body.signing_secret, clock);
    const first = toAll.find((r) => r.body.event.event_type === 'discussion.posted')!;
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['user-agent']).toBe('Conclave-Webhooks/0.1.0');
    expect(first.headers['webhook-timestamp']).toBe(String(Math.floor(T0 / 1000)));
    expect(first.body.slug).toBe(all.slug);
    expect(filtered[0]!.body.event.data).toMatchObject({ seq: 1, winner: 'yes', status: 'completed' });
    expect(filtered[0]!.headers['webhook-id']).toBe(
      toAll.find((r) => r.body.event.event_type === 'decision.completed')!.headers['webhook-id'],
    );
  });

  it('retries on the backoff schedule while the receiver is down, and delivers every event once it is back', async () => {
    const svc = await start();
    const { slug, tokens, id, secret } = await subscribe(svc);
    await receiver.down();
    for (let i = 0; i < 3; i++) {
      await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: `m${i}` } });
    }
    await attempted(svc, slug, id, 3);
    // Not yet due: nothing is attempted early.
    clock.advance(4 * SECOND);
    await svc.service.engagement.webhooks.runDue();
    expect((await roomDeliveries(svc, slug, id)).map((d) => d.attempts)).toEqual([1, 1, 1]);
    for (const [delay, attempts] of [
      [5 * SECOND, 2],
      [5 * MINUTE, 3],
    ] as const) {
      clock.advance(delay);
      await svc.service.engagement.webhooks.runDue();
      expect((await roomDeliveries(svc, slug, id)).map((d) => d.attempts)).toEqual([attempts, attempts, attempts]);
    }
    expect(receiver.received).toHaveLength(0);
    await receiver.up();
    clock.advance(30 * MINUTE);
    await svc.service.engagement.webhooks.runDue();
    expect(seqsOf(receiver)).toEqual([4, 5, 6]);
    expect(receiver.received).toHaveLength(3);
    verifyAll(receiver.received, secret, clock);
    expect((await roomDeliveries(svc, slug, id)).map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('loses nothing across a restart in the middle of the backoff', async () => {
    const first = await start();
    const { slug, tokens, id, secret } = await subscribe(first);
    receiver.status = 503;
    await call(first.base, 'POST', `/api/rooms/${slug}/discuss`, {
      token: tokens[1],
      body: { body: 'before restart' },
    });
    await attempted(first, slug, id, 1);
    expect(receiver.received).toHaveLength(1);
    await first.stop({ keepData: true });
    running.splice(running.indexOf(first), 1);

    receiver.received.length = 0;
    receiver.status = 200;
    const second = await start(first.dataDir);
    clock.advance(5 * SECOND);
    await second.service.engagement.webhooks.runDue();
    expect(seqsOf(receiver)).toEqual([4]);
    expect(receiver.received).toHaveLength(1);
    verifyAll(receiver.received, secret, clock);
  });

  it('recovers, at start-up, events committed while nothing enqueued them', async () => {
    const first = await start();
    const { slug, tokens } = await subscribe(first);
    // As if the process died between the commit and the enqueue.
    await first.service.engagement.webhooks.stop();
    await call(first.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'orphan' } });
    await first.stop({ keepData: true });
    running.splice(running.indexOf(first), 1);
    expect(receiver.received).toHaveLength(0);

    const second = await start(first.dataDir);
    await second.service.engagement.webhooks.runDue();
    await eventually(() => receiver.received.length === 1);
    expect(receiver.received[0]!.body.event).toMatchObject({ seq: 4, event_type: 'discussion.posted' });
  });

  it('disables a subscription after 3 consecutive events exhaust all 8 attempts', async () => {
    const svc = await start();
    // A room without a decision: no seal joins the events on the way.
    const { slug, tokens, id } = await subscribe(svc, { about: 'Doomed deliveries' });
    receiver.status = 500;
    for (let i = 0; i < 3; i++) {
      await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: `doomed ${i}` } });
    }
    await attempted(svc, slug, id, 3);
    for (const delay of [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]) {
      clock.advance(delay);
      await svc.service.engagement.webhooks.runDue();
    }
    expect(receiver.received).toHaveLength(24);
    const deliveries = await roomDeliveries(svc, slug, id);
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
      ['exhausted', 8],
      ['exhausted', 8],
      ['exhausted', 8],
    ]);
    const listed = await call(svc.base, 'GET', `/api/rooms/${slug}/webhooks`, { token: tokens[0] });
    expect(listed.body.webhooks[0].disabled_at).toBe(new Date(clock.now()).toISOString());

    receiver.status = 200;
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[1], body: { body: 'ignored' } });
    clock.advance(HOUR);
    await svc.service.engagement.webhooks.runDue();
    expect(receiver.received).toHaveLength(24);
  });
});
