/**
 * Network-error retries and event pagination against a real service. The first attempts of a
 * flaky call go to a closed loopback port (a real connection refusal); the retry waits through an
 * injected `sleep`, so the test records the backoff instead of spending it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConclaveClient, ConclaveNetworkError, type RoomEvent } from '../../src/client/index.js';
import { type RunningService, startService } from '../support/service.js';

/** No one listens here: a connection to it is refused at once. */
const CLOSED = 'http://127.0.0.1:9';

describe('ConclaveClient retries and pagination', () => {
  let svc: RunningService;
  let slug: string;
  let token: string;

  beforeAll(async () => {
    svc = await startService();
    const anyone = new ConclaveClient({ baseUrl: svc.base });
    const room = await anyone.createRoom({ question: 'Paginate?', options: ['yes', 'no'] });
    slug = room.slug;
    token = room.creator_token;
    const host = new ConclaveClient({ baseUrl: svc.base, token });
    for (let i = 0; i < 7; i++) await host.discuss({ slug, body: `message ${i}` });
  });
  afterAll(async () => {
    await svc.stop();
  });

  /** A client whose first `failures` requests are refused; it records every request and every wait. */
  function flaky(failures: number, retry: boolean) {
    const requests: { method: string; key: string | null }[] = [];
    const waits: number[] = [];
    const client = new ConclaveClient({
      baseUrl: svc.base,
      token,
      fetch: (url, init) => {
        requests.push({ method: init?.method ?? 'GET', key: new Headers(init?.headers).get('idempotency-key') });
        const target = requests.length <= failures ? String(url).replace(svc.base, CLOSED) : url;
        return fetch(target, init);
      },
      ...(retry
        ? {
            retry: {
              attempts: 3,
              baseDelayMs: 100,
              random: () => 0.5,
              sleep: async (ms: number) => void waits.push(ms),
            },
          }
        : {}),
    });
    return { client, requests, waits };
  }

  it('retries a GET refused at the network, backing off exponentially with jitter', async () => {
    const { client, requests, waits } = flaky(2, true);
    const view = await client.getRoom({ slug });
    expect(view.decision?.options).toEqual(['yes', 'no']);
    expect(requests).toHaveLength(3);
    // 100 ms, then 200 ms, each scaled by the injected jitter (0.5 + 0.5 / 2 = 0.75).
    expect(waits).toEqual([75, 150]);
  });

  it('retries a mutation with the same Idempotency-Key, so it acts once', async () => {
    const { client, requests } = flaky(1, true);
    const posted = await client.discuss({ slug, body: 'sent twice, posted once' });
    expect(requests).toHaveLength(2);
    expect(requests[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(requests[1]!.key).toBe(requests[0]!.key);
    const events = await client.listEvents({ slug, since_seq: 0, limit: 1000 });
    const copies = events.events.filter(
      (e) => e.event_type === 'discussion.posted' && e.data.body === 'sent twice, posted once',
    );
    expect(copies).toHaveLength(1);
    expect(posted.ok).toBe(true);
  });

  it('does not retry what is not safe to repeat: a mutation without a key, a non-idempotent POST', async () => {
    const keyless = flaky(1, true);
    await expect(keyless.client.discuss({ slug, body: 'no key', idempotencyKey: false })).rejects.toBeInstanceOf(
      ConclaveNetworkError,
    );
    expect(keyless.requests).toHaveLength(1);
    const device = flaky(1, true);
    await expect(device.client.startDeviceAuthorization({ client_id: 'cli' })).rejects.toMatchObject({
      kind: 'network',
    });
    expect(device.requests).toHaveLength(1);
  });

  it('does not retry unless asked, and gives up after the attempts', async () => {
    const plain = flaky(1, false);
    await expect(plain.client.getRoom({ slug })).rejects.toMatchObject({ kind: 'network' });
    expect(plain.requests).toHaveLength(1);
    const down = flaky(10, true);
    await expect(down.client.health()).rejects.toMatchObject({ kind: 'network' });
    expect(down.requests).toHaveLength(4);
    expect(down.waits).toEqual([75, 150, 300]);
  });

  it('paginates every stored event in order, a page at a time, and stops when the loop breaks', async () => {
    const pages: string[] = [];
    const client = new ConclaveClient({
      baseUrl: svc.base,
      token,
      fetch: (url, init) => {
        pages.push(new URL(String(url)).search);
        return fetch(url, init);
      },
    });
    const all = (await client.listEvents({ slug, since_seq: 0, limit: 1000 })).events;
    expect(all.length).toBeGreaterThan(8);
    pages.length = 0;
    const walked: RoomEvent[] = [];
    for await (const event of client.paginateEvents({ slug, since_seq: 0, limit: 3 })) walked.push(event);
    expect(walked.map((e) => e.seq)).toEqual(all.map((e) => e.seq));
    expect(pages).toHaveLength(Math.ceil(all.length / 3));
    expect(pages[1]).toContain('since_seq=3');

    pages.length = 0;
    const firstFour: number[] = [];
    for await (const event of client.paginateEvents({ slug, limit: 3 })) {
      firstFour.push(event.seq);
      if (firstFour.length === 4) break;
    }
    expect(firstFour).toEqual(all.slice(0, 4).map((e) => e.seq));
    expect(pages).toHaveLength(2);
  });
});
