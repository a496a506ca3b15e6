/** Webhook signatures, the retry schedule and the address guard as applied to webhook targets. */
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_ATTEMPTS, nextAttemptAt } from '../../../src/engagement/retry-schedule.js';
import { parseWebhookUrl, resolveTarget, WebhookTargetRejected } from '../../../src/engagement/ssrf.js';
import {
  deliveryHeaders,
  newSigningSecret,
  signatureHeader,
  verifySignature,
} from '../../../src/engagement/webhook-signing.js';

describe('webhook signatures', () => {
  it('signs "<t>.<raw body>" with the whole secret string as the HMAC key', () => {
    const secret = 'whsec_test-secret';
    const body = '{"slug":"k7m3pq2dnx","event":{"seq":1}}';
    const expected = createHmac('sha256', secret).update(`1777629600.${body}`).digest('hex');
    expect(signatureHeader(secret, 1777629600, body)).toBe(`t=1777629600,v1=${expected}`);
  });

  it('verifies in constant time and refuses tampering, other keys and stale timestamps', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const header = signatureHeader(secret, 1000, 'body');
    expect(verifySignature(secret, header, 'body', 1000)).toBe(true);
    expect(verifySignature(secret, header, 'body', 1300)).toBe(true);
    expect(verifySignature(secret, header, 'body', 1301)).toBe(false);
    expect(verifySignature(secret, header, 'bodY', 1000)).toBe(false);
    expect(verifySignature(newSigningSecret(), header, 'body', 1000)).toBe(false);
    expect(verifySignature(secret, 'v1=abc', 'body', 1000)).toBe(false);
  });

  it('sends exactly the protocol header by default', () => {
    const secret = 'whsec_test-secret';
    expect(deliveryHeaders(secret, 'evt-1', 1000, 'body')).toEqual({
      'webhook-id': 'evt-1',
      'webhook-timestamp': '1000',
      'webhook-signature': signatureHeader(secret, 1000, 'body'),
    });
    expect(signatureHeader(secret, 1000, 'body')).toMatch(/^t=1000,v1=[0-9a-f]{64}$/);
  });

  it('with WEBHOOK_STANDARD_SIGNATURE, sends the Standard Webhooks entries after the protocol one', () => {
    const secret = 'whsec_test-secret';
    const headers = deliveryHeaders(secret, 'evt-1', 1000, 'body', true);
    const decoded = Buffer.from('test-secret', 'base64url');
    const standard = createHmac('sha256', decoded).update('evt-1.1000.body').digest('base64');
    const raw = createHmac('sha256', secret).update('evt-1.1000.body').digest('base64');
    expect(headers).toEqual({
      'webhook-id': 'evt-1',
      'webhook-timestamp': '1000',
      'webhook-signature': `${signatureHeader(secret, 1000, 'body')} v1,${standard} v1,${raw}`,
    });
    expect(verifySignature(secret, headers['webhook-signature']!, 'body', 1000)).toBe(true);
    expect(verifySignature(secret, `v1,${standard}`, 'body', 1000)).toBe(false);
  });

  it('draws secrets that Standard Webhooks libraries take as they are (base64 and base64url at once)', () => {
    for (let i = 0; i < 50; i += 1) expect(newSigningSecret()).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
  });

  describe('a secret issued before (base64url with - and _), as the store keeps it', () => {
    const old = 'whsec_o-i5OTRZckO2SrUDxmsoZMf59h_rKmzl9zLT4jsuKqs';
    const body = '{"slug":"k7m3pq2dnx","event":{"seq":1}}';
    const at = 1777629600;
    const headers = deliveryHeaders(old, 'evt-1', at, body, true);
    afterEach(() => {
      vi.useRealTimers();
    });

    it('keeps its protocol signature: the whole secret string is still the key', () => {
      const hex = createHmac('sha256', old).update(`${at}.${body}`).digest('hex');
      expect(headers['webhook-signature']!.split(' ')[0]).toBe(`t=${at},v1=${hex}`);
      expect(deliveryHeaders(old, 'evt-1', at, body)['webhook-signature']).toBe(`t=${at},v1=${hex}`);
    });

    it('verifies with the raw-format verifier, and with its base64 spelling', () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(at * 1000);
      expect(new Webhook(old, { format: 'raw' }).verify(body, headers)).toEqual(JSON.parse(body));
      const spelled = `whsec_${old.slice('whsec_'.length).replace(/-/g, '+').replace(/_/g, '/')}`;
      expect(new Webhook(spelled).verify(body, headers)).toEqual(JSON.parse(body));
    });
  });
});

describe('retry schedule', () => {
  it('makes 8 attempts: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after each failure', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((made) => nextAttemptAt(made, 0));
    expect(delays).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    expect(nextAttemptAt(8, 0)).toBeNull();
  });
});

describe('webhook targets', () => {
  const lookupTo =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('checks every address a host resolves to, and connects to the first one', async () => {
    const url = parseWebhookUrl('https://hooks.example.com/in');
    expect(
      await resolveTarget(url, false, lookupTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c')),
    ).toEqual({
      address: '93.184.215.14',
      family: 4,
    });
    // A name that resolves (or rebinds) to a private address is refused, even next to a public one.
    for (const rebound of ['127.0.0.1', '10.0.0.7', '::ffff:192.168.1.1', 'fe80::1', '100.100.0.1']) {
      await expect(resolveTarget(url, false, lookupTo('93.184.215.14', rebound))).rejects.toThrow(
        WebhookTargetRejected,
      );
    }
    await expect(
      resolveTarget(url, false, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toThrow(/does not resolve/);
  });

  it('lets the operator allow private targets', async () => {
    const url = parseWebhookUrl('http://127.0.0.1:9000/hook');
    expect(await resolveTarget(url, true)).toEqual({ address: '127.0.0.1', family: 4 });
    await expect(resolveTarget(url, false)).rejects.toThrow(WebhookTargetRejected);
    expect(await resolveTarget(parseWebhookUrl('http://[::1]:9000/'), true)).toEqual({ address: '::1', family: 6 });
  });
});
