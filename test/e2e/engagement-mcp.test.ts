/**
 * Engagement through MCP: `wait` (participant), `wait_outcome`, `list_events` and the webhook tools
 * (host) reach the same operations as REST, with the same answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, seatedRoom } from '../support/engagement.js';
import { connectModern, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';

describe('engagement over MCP', () => {
  let svc: RunningService;
  let participant: McpSession;
  let host: McpSession;
  beforeAll(async () => {
    svc = await startService({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    participant = await connectModern(`${svc.base}/mcp`);
    host = await connectModern(`${svc.base}/mcp/host`);
  });
  afterAll(async () => {
    await participant?.close();
    await host?.close();
    await svc.stop();
  });

  it('wait answers my_choice by default and switches to activity with since', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { question: 'Via MCP?', options: ['a', 'b'] });
    expect(await ok(participant, 'wait', { slug, token: tokens[1], wait_seconds: 0 })).toMatchObject({
      ok: true,
      status: 'actionable',
      for: 'my_choice',
      decision: { seq: 1 },
    });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'a' } });
    const head = (await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[1] })).body.current_through;
    const waiting = ok(participant, 'wait', { slug, token: tokens[1], since: head, wait_seconds: 30 });
    await eventually(() => svc.service.engagement.waiters.parked === 1);
    await call(svc.base, 'POST', `/api/rooms/${slug}/discuss`, { token: tokens[0], body: { body: 'hello' } });
    expect(await waiting).toMatchObject({
      status: 'activity',
      for: 'activity',
      event: { seq: head + 1, type: 'discussion', who: 'creator' },
    });
  });

  it('wait_outcome waits for completion above since_seq', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, {
      question: 'Seal it?',
      options: ['yes', 'no'],
      config: { early_close: true, settle_window: 0 },
    });
    const waiting = ok(host, 'wait_outcome', { slug, token: tokens[0], since_seq: 0, wait_seconds: 30 });
    await eventually(() => svc.service.engagement.waiters.parked === 1);
    for (const token of tokens) {
      await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'yes' } });
    }
    expect(await waiting).toMatchObject({
      status: 'actionable',
      for: 'completion',
      decision: { seq: 1, status: 'resolved', resolved_winner: 'yes' },
    });
  });

  it('list_events and the webhook tools mirror their REST routes', async () => {
    const { slug, tokens } = await seatedRoom(svc.base, { about: 'Hosted' });
    const replay = await ok(host, 'list_events', { slug, token: tokens[0], since_seq: 1, limit: 1 });
    const rest = await call(svc.base, 'GET', `/api/rooms/${slug}/events?since_seq=1&limit=1`, { token: tokens[0] });
    expect(replay).toEqual({ ok: true, ...rest.body });

    const registered = await ok(host, 'register_webhook', {
      slug,
      token: tokens[0],
      url: 'http://127.0.0.1:9/hook',
      event_types: ['room.concluded'],
    });
    expect(registered.signing_secret).toMatch(/^whsec_/);
    const listed = await ok(host, 'list_webhooks', { slug, token: tokens[0] });
    expect(listed.webhooks.map((w: { id: string }) => w.id)).toEqual([registered.webhook_id]);
    for (let i = 0; i < 2; i++) {
      expect(
        await ok(host, 'unregister_webhook', { slug, token: tokens[0], webhook_id: registered.webhook_id }),
      ).toEqual({
        ok: true,
      });
    }
  });
});
