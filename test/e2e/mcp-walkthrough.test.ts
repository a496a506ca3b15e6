/**
 * A room decided entirely over MCP, once per protocol era: a host client creates the room on
 * /mcp/host, a participant client joins on /mcp, reads, discusses, proposes and chooses, the creator
 * chooses too, the room resolves, and `outcome` shows the winner and a receipt hash. A plain REST read
 * with the participant's token then sees the same room. `wait` and `wait_outcome` long-poll along the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERAS, type McpSession, ok } from '../support/mcp-clients.js';
import { call, type RunningService, startService } from '../support/service.js';
import { withoutLogTiming } from '../support/tlog.js';

describe.each(ERAS)('MCP walkthrough ($era)', ({ era, connect }) => {
  let svc: RunningService;
  let host: McpSession;
  let participant: McpSession;

  beforeAll(async () => {
    svc = await startService();
    host = await connect(`${svc.base}/mcp/host`);
    participant = await connect(`${svc.base}/mcp`);
  });
  afterAll(async () => {
    await host?.close();
    await participant?.close();
    await svc.stop();
  });

  it('negotiates the era and names the server', () => {
    for (const session of [host, participant]) {
      expect(session.negotiatedVersion).toBe(era);
      expect(session.serverInfo).toEqual({ name: 'conclave', version: svc.service.services.info.version });
    }
    expect(host.instructions).toMatch(/host catalog/);
    expect(participant.instructions).toMatch(/participant catalog/);
  });

  it('creates, joins, deliberates, decides and verifies against REST', async () => {
    const created = await ok(host, 'create_room', {
      question: 'Where do we meet?',
      options: ['alpha', 'beta'],
      display_name: 'host',
      config: { early_close: true, settle_window: 0 },
    });
    expect(created.ok).toBe(true);
    const { slug, creator_token: hostToken } = created;
    expect(slug).toMatch(/^[a-z0-9]{10}$/);
    expect(hostToken).toMatch(/^t_/);

    const joined = await ok(participant, 'join_room', { slug, display_name: 'ann' });
    expect(joined).toMatchObject({ ok: true, slug, display_name: 'ann', role: 'participant' });
    const token = joined.participant_token as string;

    const view = await ok(participant, 'read_room', { slug, token });
    expect(view.ok).toBe(true);
    expect(JSON.stringify(view)).toContain('Where do we meet?');

    const owed = await ok(participant, 'wait', { slug, token, wait_seconds: 0 });
    expect(owed).toMatchObject({ ok: true, status: 'actionable', for: 'my_choice', decision: { seq: 1 } });

    const said = await ok(participant, 'discuss', { slug, token, body: 'alpha is closer', stance: 'agree' });
    expect(said.id).toBeTruthy();

    const proposed = await ok(participant, 'propose', { slug, token, option: 'gamma' });
    expect(proposed).toMatchObject({ ok: true, slug, decision: 1 });

    const chosen = await ok(participant, 'choose', { slug, token, choice: 'alpha', reason: 'closest' });
    expect(chosen).toMatchObject({ ok: true, slug, decision: 1, status: 'voting' });

    expect(await ok(participant, 'wait', { slug, token, wait_seconds: 0 })).toMatchObject({ status: 'timeout' });

    const sealed = ok(host, 'wait_outcome', { slug, token: hostToken, since_seq: 0, wait_seconds: 10 });
    const final = await ok(participant, 'choose', { slug, token: hostToken, choice: 1 });
    expect(final).toMatchObject({ ok: true, status: 'resolved', resolved_winner: 'alpha' });
    expect(await sealed).toMatchObject({
      ok: true,
      status: 'actionable',
      for: 'completion',
      decision: { seq: 1, status: 'resolved', resolved_winner: 'alpha' },
    });

    const outcome = await ok(participant, 'outcome', { slug, token });
    expect(outcome).toMatchObject({ ok: true, slug, resolved_winner: 'alpha' });
    expect(outcome.receipt_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(outcome.decisions[0].receipt_hash).toBe(outcome.receipt_hash);

    const rest = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token });
    expect(rest.status).toBe(200);
    const mcpRead = await ok(participant, 'read_room', { slug, token });
    expect(rest.body.slug).toBe(slug);
    expect(mcpRead.slug).toBe(slug);
    expect(rest.body.status).toBe(mcpRead.status);
    const restOutcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token });
    expect(restOutcome.body).toMatchObject({ slug, status: outcome.status, resolved_winner: 'alpha' });
    // Each read carries the log inclusion known at its moment: compare everything else.
    expect(withoutLogTiming({ ok: true, ...restOutcome.body })).toEqual(withoutLogTiming(outcome));
  });
});
