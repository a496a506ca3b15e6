/**
 * Webhook receivers written from docs/agents.md (Webhooks), run against real deliveries: the
 * protocol's own `t=…,v1=…` receiver on a default server (whose header is exactly that), and on a
 * server with WEBHOOK_STANDARD_SIGNATURE=true both a `standardwebhooks` receiver given the secret as
 * it is (`new Webhook(secret)`) and the same protocol receiver. The receivers mirror the guide's
 * snippets; when one stops working here, fix the guide.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { OPERATIONS } from '../../src/operations/table.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { repoRoot } from '../support/built.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { type ReceivedWebhook, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

/** docs/agents.md, Webhooks: the protocol's signature, checked by hand. */
function verifyProtocol(secret: string, header: string, rawBody: string, nowSeconds: number): boolean {
  const [entry = ''] = header.split(' '); // the protocol's entry leads; Standard Webhooks entries may follow
  const { t, v1 } = Object.fromEntries(entry.split(',').map((part) => part.split('=')));
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');
  return (
    nowSeconds - Number(t) <= 300 &&
    v1?.length === expected.length &&
    timingSafeEqual(Buffer.from(v1), Buffer.from(expected))
  );
}

const headersOf = (r: ReceivedWebhook) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/** A room with a subscription whose receiver consented, and one discussion delivered to it. */
async function delivered(svc: RunningService, receiver: WebhookReceiver) {
  receiver.received.length = 0;
  const room = await seatedRoom(svc.base, { about: 'Signatures' }, 1);
  const registered = await call(svc.base, 'POST', `/api/rooms/${room.slug}/webhooks`, {
    token: room.tokens[0],
    body: { url: receiver.url },
  });
  expect(registered.status).toBe(200);
  await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token: room.tokens[0], body: { body: 'hi' } });
  // The verification delivery first (the receiver's 2xx is its consent), then the room's event.
  await eventually(() => receiver.received.length >= 2);
  const [verification, delivery] = receiver.received as [ReceivedWebhook, ReceivedWebhook];
  expect(verification.body.event.event_type).toBe(VERIFICATION_EVENT_TYPE);
  expect(delivery.body.event.event_type).toBe('discussion.posted');
  return { secret: registered.body.signing_secret as string, verification, delivery };
}

describe('webhook receivers written from the guide', () => {
  const clock = new ManualClock(T0);
  let plain: RunningService;
  let standard: RunningService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    [plain, standard] = await Promise.all([
      startService({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } }),
      startService({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_STANDARD_SIGNATURE: 'true' } }),
    ]);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await Promise.all([plain?.stop(), standard?.stop()]);
    await receiver.close();
  });

  it('on a default server, the header is exactly the protocol one, and its receiver verifies', async () => {
    const { secret, verification, delivery } = await delivered(plain, receiver);
    for (const received of [verification, delivery]) {
      const header = headersOf(received)['webhook-signature'];
      expect(header).toMatch(new RegExp(`^t=${T0 / 1000},v1=[0-9a-f]{64}$`));
      expect(verifyProtocol(secret, header, received.raw, T0 / 1000 + 30)).toBe(true);
    }
    expect(
      verifyProtocol(secret, headersOf(delivery)['webhook-signature'], delivery.raw.replace('hi', 'ho'), T0 / 1000),
    ).toBe(false);
  });

  it('with WEBHOOK_STANDARD_SIGNATURE=true, new Webhook(secret) verifies, and so does the protocol receiver', async () => {
    const { secret, verification, delivery } = await delivered(standard, receiver);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
    const headers = headersOf(delivery);
    expect(headers['webhook-id']).toBe(delivery.body.event.id);
    expect(headers['webhook-timestamp']).toBe(String(T0 / 1000));

    // The verifier reads the wall clock for its 5-minute window: pin it to the service's clock.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 30_000);
    const webhook = new Webhook(secret);
    expect(webhook.verify(delivery.raw, headers)).toEqual(delivery.body);
    // A Standard Webhooks receiver verifies the verification delivery like any other.
    expect(webhook.verify(verification.raw, headersOf(verification))).toEqual(verification.body);
    // Receivers built before, with the secret's raw text as the key, keep verifying.
    expect(new Webhook(secret, { format: 'raw' }).verify(delivery.raw, headers)).toEqual(delivery.body);
    expect(() => webhook.verify(delivery.raw.replace('hi', 'ho'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(`whsec_${'A'.repeat(43)}`).verify(delivery.raw, headers)).toThrow(
      WebhookVerificationError,
    );
    vi.setSystemTime(T0 + 301_000);
    expect(() => webhook.verify(delivery.raw, headers)).toThrow(/too old/);
    vi.useRealTimers();

    expect(verifyProtocol(secret, headers['webhook-signature'], delivery.raw, T0 / 1000 + 30)).toBe(true);
    expect(verifyProtocol(secret, headers['webhook-signature'], delivery.raw, T0 / 1000 + 301)).toBe(false);
  });

  it('names WEBHOOK_STANDARD_SIGNATURE wherever the Standard Webhooks verification is shown', async () => {
    const passages: Record<string, string> = {};
    for (const file of ['README.md', 'docs/agents.md']) {
      // Paragraphs and list items: each one that shows the Standard Webhooks verifier names the setting.
      const text = await readFile(path.join(repoRoot, file), 'utf8');
      text.split(/\n(?=\n|- )/).forEach((passage, i) => {
        passages[`${file} #${i}`] = passage;
      });
    }
    const tool = buildCatalog('host', OPERATIONS).find((t) => t.name === 'register_webhook');
    passages.register_webhook = tool?.description ?? '';
    const showing = Object.entries(passages).filter(([, text]) => /new Webhook\(/.test(text));
    expect(showing.map(([where]) => where)).toContain('register_webhook');
    expect(showing.length).toBeGreaterThanOrEqual(3);
    for (const [where, text] of showing) expect(text, where).toContain('WEBHOOK_STANDARD_SIGNATURE');
  });
});
