/**
 * The worked examples of docs/how-decisions-end.md, run through the real service (real HTTP, a
 * manual clock). Each `it` names the example it checks; when one fails, the guide is wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRoomReceiptChain } from '../../src/client/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const MINUTE = 60_000;

function payloadOf(jws: string): any {
  return JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('docs/how-decisions-end.md, example by example', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  /** A room with `members` seats, the creator first; `options` default to tea, coffee, water. */
  async function room(body: Record<string, unknown>, members: number) {
    clock.set(T0);
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'What do we drink?', options: ['tea', 'coffee', 'water'], ...body },
    });
    expect(created.status).toBe(200);
    const slug = created.body.slug as string;
    const tokens = [created.body.creator_token as string];
    for (let i = 1; i < members; i++) tokens.push(await join(slug));
    return { slug, tokens };
  }

  async function join(slug: string): Promise<string> {
    const joined = await call(svc.base, 'POST', `/api/rooms/${slug}/join`, { body: {} });
    expect(joined.status).toBe(200);
    return joined.body.participant_token;
  }

  const choose = (slug: string, token: string, choice: unknown) =>
    call(svc.base, 'POST', `/api/rooms/${slug}/choose`, { token, body: { choice } });
  const view = (slug: string, token: string) => call(svc.base, 'GET', `/api/rooms/${slug}`, { token });
  const outcome = (slug: string, token: string) => call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token });

  it('example 1: without early close, four of four choices still wait for the window', async () => {
    const { slug, tokens } = await room({}, 4);
    clock.advance(5 * MINUTE);
    for (const token of tokens) expect((await choose(slug, token, 'tea')).body.status).toBe('voting');
    const open = await view(slug, tokens[0]!);
    expect(open.body.decision.status).toBe('voting');
    expect(open.body.brief).toContain('4 of 4 have chosen');
    expect(open.body.rules.choices_lock).toBe('at_close');
    // Still revisable.
    expect((await choose(slug, tokens[3]!, 'coffee')).body).toMatchObject({ revised: true, status: 'voting' });
    expect((await choose(slug, tokens[3]!, 'tea')).body.status).toBe('voting');
    clock.set(T0 + 60 * MINUTE);
    const done = await outcome(slug, tokens[0]!);
    expect(done.body.decisions[0]).toMatchObject({
      resolved_winner: 'tea',
      outcome_status: 'completed',
      resolved_at: new Date(T0 + 60 * MINUTE).toISOString(),
    });
  });

  it('example 2: early close seals as soon as the outstanding ballots cannot change the winner', async () => {
    const { slug, tokens } = await room({ config: { early_close: true, settle_window: 0 } }, 4);
    expect((await choose(slug, tokens[0]!, 'tea')).body.status).toBe('voting');
    expect((await choose(slug, tokens[1]!, 'tea')).body.status).toBe('voting');
    const third = await choose(slug, tokens[2]!, 'tea');
    expect(third.body).toMatchObject({ status: 'resolved', resolved_winner: 'tea' });
    expect((await choose(slug, tokens[3]!, 'coffee')).body.error.code).toBe('decision.not_open');
  });

  describe('example 3: a ranked room with early close and nobody else in it', () => {
    const ranked = { mechanism: 'ranked_choice', early_close: true };

    it("seals on the creator's own ballot: the creator is the whole electorate", async () => {
      const { slug, tokens } = await room({ config: { ...ranked, settle_window: 0 } }, 1);
      expect((await choose(slug, tokens[0]!, ['coffee', 'tea'])).body).toMatchObject({
        status: 'resolved',
        resolved_winner: 'coffee',
      });
    });

    it('does not seal on the first of two ballots: ranked counts wait for everyone', async () => {
      const { slug, tokens } = await room({ config: { ...ranked, settle_window: 0 } }, 2);
      expect((await choose(slug, tokens[0]!, ['coffee', 'tea'])).body.status).toBe('voting');
      expect((await choose(slug, tokens[1]!, ['tea'])).body.status).toBe('resolved');
    });

    it('with the default settle window, a join during settling cancels it', async () => {
      const { slug, tokens } = await room({ config: ranked }, 1);
      const first = await choose(slug, tokens[0]!, ['coffee', 'tea']);
      expect(first.body.settling).toEqual({ seals_in_seconds: 45, presumptive: 'coffee' });
      clock.advance(10_000);
      const late = await join(slug);
      const open = await view(slug, late);
      expect(open.body.decision.status).toBe('voting');
      expect(open.body.decision.settling).toBeUndefined();
      clock.advance(60_000);
      expect((await view(slug, late)).body.decision.status).toBe('voting');
    });

    it('waits with a quorum as an electorate floor', async () => {
      const { slug, tokens } = await room({ config: { ...ranked, settle_window: 0, quorum: 3 } }, 1);
      expect((await choose(slug, tokens[0]!, ['coffee'])).body.status).toBe('voting');
      const second = await join(slug);
      expect((await choose(slug, second, ['tea'])).body.status).toBe('voting');
      const third = await join(slug);
      expect((await choose(slug, third, ['tea', 'coffee'])).body.status).toBe('resolved');
    });

    it('waits for an expected invite', async () => {
      const { slug, tokens } = await room({ config: { ...ranked, settle_window: 0 } }, 1);
      const invite = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, {
        token: tokens[0],
        body: { label: 'bob' },
      });
      expect(invite.status).toBe(200);
      expect((await choose(slug, tokens[0]!, ['coffee'])).body.status).toBe('voting');
    });
  });

  it('example 4: settling keeps the settle end while the winner stays the same', async () => {
    const { slug, tokens } = await room({ config: { early_close: true, settle_window: 30 } }, 3);
    await choose(slug, tokens[0]!, 'tea');
    await choose(slug, tokens[1]!, 'tea');
    const third = await choose(slug, tokens[2]!, 'coffee');
    expect(third.body.settling).toEqual({ seals_in_seconds: 30, presumptive: 'tea' });
    clock.advance(10_000);
    expect((await choose(slug, tokens[2]!, 'water')).body.settling).toEqual({
      seals_in_seconds: 20,
      presumptive: 'tea',
    });
    clock.advance(20_000);
    const done = await outcome(slug, tokens[0]!);
    expect(done.body.decisions[0]).toMatchObject({
      resolved_winner: 'tea',
      resolved_at: new Date(T0 + 30_000).toISOString(),
    });
    const windows = payloadOf(done.body.receipt_jws).svc.windows;
    expect(windows.voting_ended_at).toBe(new Date(T0).toISOString());
    expect(windows.cooldown_ended_at).toBe(new Date(T0 + 30_000).toISOString());
  });

  it('example 5: quorum 4 with two members shows 2 of 4 and ends no_quorum', async () => {
    const { slug, tokens } = await room({ config: { quorum: 4, early_close: true, settle_window: 0 } }, 2);
    await choose(slug, tokens[0]!, 'tea');
    expect((await choose(slug, tokens[1]!, 'tea')).body.status).toBe('voting');
    const open = await view(slug, tokens[0]!);
    expect(open.body.decision.eligible_voters).toBe(4);
    expect(open.body.brief).toContain('2 of 4 have chosen');
    clock.set(T0 + 60 * MINUTE);
    expect((await outcome(slug, tokens[0]!)).body.decisions[0]).toMatchObject({
      outcome_status: 'no_quorum',
      resolved_winner: null,
    });
  });

  it('example 6: a pending expected invite holds early close until it is revoked', async () => {
    const { slug, tokens } = await room({ config: { early_close: true, settle_window: 0 } }, 2);
    const invite = await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, {
      token: tokens[0],
      body: { label: 'carol' },
    });
    await choose(slug, tokens[0]!, 'tea');
    expect((await choose(slug, tokens[1]!, 'tea')).body.status).toBe('voting');
    const open = await view(slug, tokens[0]!);
    expect(open.body.roster.waiting_for).toEqual(['carol']);
    await call(svc.base, 'DELETE', `/api/rooms/${slug}/invites/${invite.body.invite.code}`, { token: tokens[0] });
    expect((await outcome(slug, tokens[0]!)).body.decisions[0]).toMatchObject({
      status: 'resolved',
      resolved_winner: 'tea',
    });
  });

  it('example 6, the exceptions: an invite with expected false does not hold it', async () => {
    const { slug, tokens } = await room({ config: { early_close: true, settle_window: 0 } }, 2);
    await call(svc.base, 'POST', `/api/rooms/${slug}/invites`, {
      token: tokens[0],
      body: { label: 'maybe', expected: false },
    });
    await choose(slug, tokens[0]!, 'tea');
    expect((await choose(slug, tokens[1]!, 'tea')).body.status).toBe('resolved');
  });

  it('section 8: a 2–2 simple-majority split is rejected, not tied', async () => {
    const { slug, tokens } = await room({ options: ['tea', 'coffee'], config: { early_close: true } }, 4);
    await choose(slug, tokens[0]!, 'tea');
    await choose(slug, tokens[1]!, 'tea');
    await choose(slug, tokens[2]!, 'coffee');
    await choose(slug, tokens[3]!, 'coffee');
    clock.set(T0 + 60 * MINUTE);
    expect((await outcome(slug, tokens[0]!)).body.decisions[0]).toMatchObject({
      outcome_status: 'rejected',
      resolved_winner: null,
    });
  });

  it('example 7: choice_visibility never hides ballots but signs the tallies', async () => {
    const { slug, tokens } = await room({ config: { choice_visibility: 'never', early_close: true } }, 2);
    await choose(slug, tokens[0]!, 'tea');
    expect((await view(slug, tokens[1]!)).body.choices).toBeNull();
    await choose(slug, tokens[1]!, 'tea');
    clock.advance(45_000);
    const done = await outcome(slug, tokens[0]!);
    const receipt = payloadOf(done.body.receipt_jws).svc;
    expect(receipt.votes).toEqual([]);
    expect(receipt.outcome).toMatchObject({
      status: 'completed',
      winning_option: 'tea',
      tallies: { tea: 2, coffee: 0, water: 0 },
      diagnostics: { cast_votes: 2, eligible_voters: 2 },
    });
    // Nothing to recount: the check says so instead of claiming a replay.
    // No keys given: everything but the signatures holds, and the report does not claim more.
    const report = await verifyRoomReceiptChain(done.body);
    expect(report.chain_ok).toBe(true);
    expect(report.ok).toBe(false);
    expect(report.receipts[0]).toMatchObject({ hash: true, link: true, replay: null });
  });

  it('section 11: with creator_votes false the creator is a non-voting host', async () => {
    const { slug, tokens } = await room({ config: { creator_votes: false, early_close: true, settle_window: 0 } }, 2);
    expect((await choose(slug, tokens[0]!, 'tea')).body.error.code).toBe('choice.not_eligible');
    const open = await view(slug, tokens[0]!);
    expect(open.body.roster.joined[0]).toMatchObject({ room_role: 'non_voting_host', voting_eligible: false });
    // The one other member is the whole electorate: their ballot completes it.
    expect((await choose(slug, tokens[1]!, 'coffee')).body.status).toBe('resolved');
  });
});
