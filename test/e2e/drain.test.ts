/**
 * Graceful drain, on a real process sent SIGTERM: a parked long-poll is answered with its timeout
 * shape (so the client polls again, elsewhere) and an event stream ends with a reconnect hint,
 * both before the process exits — and it exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, spawnService } from '../support/child-service.js';
import { eventually } from '../support/engagement.js';
import { call } from '../support/service.js';

describe('draining on SIGTERM', () => {
  let peer: ChildService;
  beforeAll(async () => {
    peer = await spawnService({ LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it('answers parked long-polls and ends streams before it exits', async () => {
    const created = await call(peer.base, 'POST', '/api/rooms', { body: { question: 'Drain?', options: ['a', 'b'] } });
    const { slug, creator_token: token } = created.body;
    const metric = async (name: string) => {
      const text = await (await fetch(`${peer.base}/metrics`)).text();
      return Number(text.match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? 0);
    };
    const poll = call(peer.base, 'GET', `/api/rooms/${slug}/next-action?for=completion&wait=40`, { token });
    const stream = await fetch(`${peer.base}/api/rooms/${slug}/events/stream`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    });
    const streamText = stream.text();
    await eventually(
      async () =>
        (await metric('conclave_waiters_parked')) === 1 && (await metric('conclave_event_streams_open')) === 1,
    );

    const exited = new Promise<number | null>((resolve) => peer.child.once('exit', (code) => resolve(code)));
    const sentAt = Date.now();
    peer.child.kill('SIGTERM');
    const answered = await poll;
    const answeredMs = Date.now() - sentAt;
    expect(answered.status).toBe(200);
    expect(answered.body.status).toBe('timeout');
    expect(await streamText).toMatch(/retry: 1000\n\n$/);
    expect(await exited).toBe(0);
    console.log(`drain: the parked long-poll was answered ${answeredMs} ms after SIGTERM; the process exited 0`);
  });
});
