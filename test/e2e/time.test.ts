/**
 * Windows close on time with an injected clock: lazy resolution on every touch, the deadline
 * scheduler with nobody touching the room, logical seal instants, settle windows and quorum.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/runtime/clock.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

function payloadOf(jws: string): any {
  return JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('time and deadlines', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  async function room(config: Record<string, unknown>, members = 2) {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which?', options: ['alpha', 'beta', 'gamma'], config: { voting_window: 600, ...config } },
    });
    const tokens = [created.body.creator_token as string];
    for (let i = 1; i < members; i++) {
      tokens.push(
        (await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/join`, { body: {} })).body.participant_token,
      );
    }
    return { slug: created.body.slug as string, tokens };
  }

  it('seals lazily at the window end on the next read, at the logical instant', async () => {
    clock.set(T0);
    const { slug, tokens } = await room({});
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'beta' } });
    clock.advance(601_000);
    const view = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[1] });
    expect(view.body.status).toBe('resolved');
    expect(view.body.decision).toBeNull();
    expect(view.body.brief).not.toContain('Deciding now');
    const outcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token: tokens[1] });
    expect(outcome.body.decisions[0]).toMatchObject({
      resolved_winner: 'beta',
      outcome_status: 'completed',
      resolved_at: new Date(T0 + 600_000).toISOString(),
    });
    const payload = payloadOf(outcome.body.receipt_jws);
    expect(payload.iat).toBe(Math.floor((T0 + 600_000) / 1000));
    expect(payload.svc.windows.voting_ended_at).toBe(new Date(T0 + 600_000).toISOString());
    const late = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'alpha' },
    });
    expect(late.body.error.code).toBe('decision.not_open');
  });

  it('fires deadlines with nobody touching the room', async () => {
    clock.set(T0);
    const { slug, tokens } = await room({});
    clock.advance(600_000);
    await svc.service.scheduler.runDue();
    const events = await svc.service.store.events(slug, 0, 100);
    const completed = events.find((e) => e.event_type === 'decision.completed');
    expect(completed?.data).toMatchObject({ status: 'no_quorum', outcome: 'no_pass', winner: null });
    expect(completed?.occurred_at).toBe(new Date(T0 + 600_000).toISOString());
    const receipts = await svc.service.store.receipts(slug);
    expect(receipts).toHaveLength(1);
    expect(payloadOf(receipts[0]!.jws).svc.outcome.status).toBe('no_quorum');
    void tokens;
  });

  it('treats an integer quorum as an electorate floor', async () => {
    clock.set(T0);
    const { slug, tokens } = await room({ quorum: 4, early_close: true, settle_window: 0 });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'alpha' } });
    const second = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[1],
      body: { choice: 'alpha' },
    });
    expect(second.body.status).toBe('voting');
    const view = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[0] });
    expect(view.body.decision.eligible_voters).toBe(4);
    expect(view.body.brief).toContain('2 of 4 have chosen');
    clock.advance(600_000);
    const outcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token: tokens[0] });
    expect(outcome.body.decisions[0].outcome_status).toBe('no_quorum');
  });

  it('settles before sealing and restarts only on a changed winner', async () => {
    clock.set(T0);
    const { slug, tokens } = await room({ early_close: true, settle_window: 30 }, 3);
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[0], body: { choice: 'alpha' } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token: tokens[1], body: { choice: 'alpha' } });
    const third = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[2],
      body: { choice: 'beta' },
    });
    expect(third.body.status).toBe('voting');
    expect(third.body.settling).toEqual({ seals_in_seconds: 30, presumptive: 'alpha' });
    clock.advance(10_000);
    const same = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
      token: tokens[2],
      body: { choice: 'gamma' },
    });
    expect(same.body.settling).toEqual({ seals_in_seconds: 20, presumptive: 'alpha' });
    const view = await call(svc.base, 'GET', `/api/rooms/${slug}?since=0`, { token: tokens[0] });
    expect(view.body.state).toMatch(/settling, seals in ~20s/);
    clock.advance(20_000);
    const outcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token: tokens[0] });
    expect(outcome.body.decisions[0]).toMatchObject({
      resolved_winner: 'alpha',
      resolved_at: new Date(T0 + 30_000).toISOString(),
    });
    const windows = payloadOf(outcome.body.receipt_jws).svc.windows;
    expect(windows.voting_ended_at).toBe(new Date(T0).toISOString());
    expect(windows.cooldown_ended_at).toBe(new Date(T0 + 30_000).toISOString());
  });

  it('seals several due decisions in seal-instant order and chains them that way', async () => {
    clock.set(T0);
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'Two at once', config: { max_open_decisions: 2 } },
    });
    const { slug, creator_token: token } = created.body;
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token,
      body: { question: 'Long one?', options: ['a', 'b'], voting_window: 900 },
    });
    await call(svc.base, 'POST', `/api/rooms/${slug}/ask`, {
      token,
      body: { question: 'Short one?', options: ['a', 'b'], voting_window: 300 },
    });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'a', decision: 1 } });
    await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice: 'b', decision: 2 } });
    clock.advance(1_000_000);
    const outcome = await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token });
    expect(outcome.body.decisions.map((d: any) => d.seq)).toEqual([2, 1]);
    expect(outcome.body.decisions[1].prev_hash).toBe(outcome.body.decisions[0].receipt_hash);
  });
});
