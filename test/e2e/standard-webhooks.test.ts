/**
 * Standard Webhooks: a delivery to a loopback receiver verifies with the `standardwebhooks` package
 * (the verifier many frameworks ship), keyed with the same signing secret as the protocol's own
 * signature, which still verifies too.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { verifySignature } from '../../src/engagement/webhook-signing.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

describe('Standard Webhooks headers', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    svc = await startService({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_STANDARD_SIGNATURE: 'true' } });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await svc.stop();
    await receiver.close();
  });

  it('a delivery verifies with the standardwebhooks package and with the protocol signature', async () => {
    const room = await seatedRoom(svc.base, { about: 'Standard' }, 1);
    const registered = await call(svc.base, 'POST', `/api/rooms/${room.slug}/webhooks`, {
      token: room.tokens[0],
      body: { url: receiver.url },
    });
    const secret = registered.body.signing_secret as string;
    await call(svc.base, 'POST', `/api/rooms/${room.slug}/discuss`, { token: room.tokens[0], body: { body: 'hi' } });
    // The verification delivery first (the receiver's 2xx is its consent), then the room's event.
    await eventually(() => receiver.received.length >= 2);
    const [verification, delivery] = receiver.received;
    expect(verification!.body.event.event_type).toBe(VERIFICATION_EVENT_TYPE);
    const headersOf = (r: typeof delivery) => ({
      'webhook-id': String(r!.headers['webhook-id']),
      'webhook-timestamp': String(r!.headers['webhook-timestamp']),
      'webhook-signature': String(r!.headers['webhook-signature']),
    });
    const headers = headersOf(delivery);
    expect(headers['webhook-id']).toBe(delivery!.body.event.id);
    expect(headers['webhook-timestamp']).toBe(String(T0 / 1000));

    // The verifier reads the wall clock for its 5-minute window: pin it to the service's clock.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0 + 30_000);
    // The secret as raw bytes, or the same bytes in the `whsec_<base64>` form the package decodes.
    const raw = new Webhook(secret, { format: 'raw' });
    const encoded = new Webhook(`whsec_${Buffer.from(secret, 'utf8').toString('base64')}`);
    expect(raw.verify(delivery!.raw, headers)).toEqual(delivery!.body);
    expect(encoded.verify(delivery!.raw, headers)).toEqual(delivery!.body);
    // A Standard Webhooks receiver verifies the verification delivery like any other.
    expect(raw.verify(verification!.raw, headersOf(verification))).toEqual(verification!.body);
    expect(() => raw.verify(delivery!.raw.replace('hi', 'ho'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook('another-secret', { format: 'raw' }).verify(delivery!.raw, headers)).toThrow(
      WebhookVerificationError,
    );
    vi.setSystemTime(T0 + 301_000);
    expect(() => raw.verify(delivery!.raw, headers)).toThrow(/too old/);
    vi.useRealTimers();

    expect(verifySignature(secret, headers['webhook-signature'], delivery!.raw, T0 / 1000)).toBe(true);
  });
});
