/**
 * Webhook fan-out: one event to 1,000 endpoints on one room, with dead receivers among them (they
 * accept the connection and never answer, so each attempt waits out its 10 s timeout). Every live
 * endpoint gets the event long before those attempts end: a dead receiver holds one delivery lane,
 * never the deliveries behind it.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFICATION_EVENT_TYPE } from '../../src/engagement/webhook-verification.js';
import { eventually, seatedRoom } from '../support/engagement.js';
import { call, type RunningService, startService } from '../support/service.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ENDPOINTS = 1000;
const DEAD = 5;

describe('webhook fan-out', () => {
  let svc: RunningService;
  let receiver: WebhookReceiver;
  let blackhole: Server;
  let blackholeUrl: string;
  const held: Socket[] = [];

  beforeAll(async () => {
    svc = await startService({
      env: {
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_MAX_PER_SEAT: '2000',
        WEBHOOK_MAX_PER_ORIGIN_PER_ROOM: '2000',
        WEBHOOK_MAX_PER_ORIGIN: '10000',
        WEBHOOK_MAX_PER_ORIGIN_PER_ADDRESS: '10000',
      },
    });
    receiver = await startReceiver();
    // Answers its verification deliveries (its consent), then never anything else.
    blackhole = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (Buffer.concat(chunks).toString('utf8').includes(VERIFICATION_EVENT_TYPE)) response.writeHead(204).end();
      });
    });
    blackhole.on('connection', (socket) => held.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    blackholeUrl = `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => blackhole?.close(resolve));
    await receiver?.close();
    await svc?.stop();
  });

  it(`delivers one event to ${ENDPOINTS} endpoints without waiting on ${DEAD} dead ones`, async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Fan-out' }, 1);
    const register = (url: string) =>
      call(svc.base, 'POST', `/api/rooms/${slug}/webhooks`, {
        token: tokens[0],
        body: { url, event_types: ['discussion.posted'] },
      });
    // The dead endpoints first: their deliveries are the first due.
    for (let i = 0; i < DEAD; i++) expect((await register(`${blackholeUrl}/dead${i}`)).status).toBe(200);
    for (let i = 0; i < ENDPOINTS; i++) expect((await register(`${receiver.url}/live${i}`)).status).toBe(200);
    await eventually(async () => {
      const hooks = await svc.service.store.engagement.webhooks(slug);
      return hooks.length === DEAD + ENDPOINTS && hooks.every((h) => h.verified_at !== null);
    }, 20_000);
    receiver.received.length = 0;

    const posted = Date.now();
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[0], body: { body: 'to everyone' } });
    await eventually(() => new Set(receiver.received.map((r) => r.url)).size === ENDPOINTS, 8_000);
    const deliveredMs = Date.now() - posted;
    console.log(`webhooks: one event delivered to ${ENDPOINTS} endpoints in ${deliveredMs} ms with ${DEAD} dead ones`);
    // Well inside the dead attempts' 10 s timeout: nothing waited on them.
    expect(deliveredMs).toBeLessThan(8_000);
    expect(held.length).toBeGreaterThanOrEqual(DEAD);
    expect(receiver.received.every((r) => r.body.event.event_type === 'discussion.posted')).toBe(true);
  }, 60_000);
});
