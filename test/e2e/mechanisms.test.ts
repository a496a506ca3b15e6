/**
 * All eight mechanisms through REST: single-voter early close, multi-voter outcomes, wrong ballot
 * shapes, agreement decisions — and every receipt the service signs replays to its own outcome.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MechanismName, replayReceipt, WIRED_MECHANISMS } from '../../src/mechanisms/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { call, type RunningService, startService } from '../support/service.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');

const ALPHA_BEST: Record<MechanismName, unknown> = {
  simple_majority: 'alpha',
  supermajority: '#1',
  plurality: 1,
  approval: ['alpha'],
  ranked_choice: ['alpha', 'beta', 'gamma'],
  ranked_pairwise: ['1', 'beta'],
  score_vote: { alpha: 5, '2': 1 },
  quadratic_vote: { alpha: 9 },
};

const WRONG_SHAPE: Record<MechanismName, unknown> = {
  simple_majority: ['alpha'],
  supermajority: { alpha: 1 },
  plurality: ['alpha'],
  approval: 'alpha',
  ranked_choice: 'alpha',
  ranked_pairwise: { alpha: 1 },
  score_vote: ['alpha'],
  quadratic_vote: 'alpha',
};

function payloadOf(jws: string): any {
  return JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('mechanisms over REST', () => {
  const clock = new ManualClock(T0);
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ clock });
  });
  afterAll(async () => {
    await svc.stop();
  });

  async function room(mechanism: string, config: Record<string, unknown> = {}, extraMembers = 0) {
    const created = await call(svc.base, 'POST', '/api/rooms', {
      body: { question: 'Which option?', options: ['alpha', 'beta', 'gamma'], config: { mechanism, ...config } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const tokens = [created.body.creator_token as string];
    for (let i = 0; i < extraMembers; i++) {
      tokens.push(
        (await call(svc.base, 'POST', `/api/rooms/${created.body.slug}/join`, { body: {} })).body.participant_token,
      );
    }
    return { slug: created.body.slug as string, tokens };
  }

  async function outcomeOf(slug: string, token: string | undefined) {
    return (await call(svc.base, 'GET', `/api/rooms/${slug}/outcome`, { token })).body;
  }

  for (const mechanism of WIRED_MECHANISMS) {
    it(`${mechanism}: the creator alone resolves at once with alpha, and the receipt replays`, async () => {
      clock.set(T0);
      const { slug, tokens } = await room(mechanism, {
        quorum: 1,
        early_close: true,
        creator_votes: true,
        settle_window: 0,
      });
      const view = await call(svc.base, 'GET', `/api/rooms/${slug}`, { token: tokens[0] });
      expect(typeof view.body.rules.how_to_choose).toBe('string');
      const wrong = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
        token: tokens[0],
        body: { choice: WRONG_SHAPE[mechanism] },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.code).toBe('input.invalid');
      expect(wrong.body.error.message).toContain(view.body.rules.how_to_choose.split(':')[0]);
      const chosen = await call(svc.base, 'POST', `/api/rooms/${slug}/choose`, {
        token: tokens[0],
        body: { choice: ALPHA_BEST[mechanism] },
      });
      expect(chosen.body, JSON.stringify(chosen.body)).toMatchObject({ status: 'resolved', resolved_winner: 'alpha' });
      const outcome = await outcomeOf(slug, tokens[0]);
      const payload = payloadOf(outcome.receipt_jws);
      expect(payload.svc.mechanism.kind).toBe(mechanism);
      expect(payload.svc.mechanism.parameters.question).toBe('Which option?');
      expect(payload.svc.outcome.winning_option).toBe('alpha');
      expect(replayReceipt(payload)).toMatchObject({ result: 'match' });
    });
  }

  /** Two voters backing different options: a top tie between alpha and beta (for every mechanism). */
  const SPLIT: Record<MechanismName, [unknown, unknown]> = {
    simple_majority: ['alpha', 'beta'],
    supermajority: ['alpha', 'beta'],
    plurality: ['alpha', 'beta'],
    approval: [['alpha'], ['beta']],
    ranked_choice: [['alpha'], ['beta']],
    ranked_pairwise: [
      ['alpha', 'beta'],
      ['beta', 'alpha'],
    ],
    score_vote: [{ alpha: 5 }, { beta: 5 }],
    quadratic_vote: [{ alpha: 4 }, { beta: 4 }],
  };

  for (const mechanism of WIRED_MECHANISMS) {
    it(`${mechanism}: a two-way tie, a silent decision and a missed quorum each seal as the tie rule says`, async () => {
      clock.set(T0);
      const tie = await room(mechanism, { voting_window: 600 }, 1);
      for (const [i, choice] of SPLIT[mechanism].entries()) {
        const res = await call(svc.base, 'POST', `/api/rooms/${tie.slug}/choose`, {
          token: tie.tokens[i],
          body: { choice },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      const silent = await room(mechanism, { voting_window: 600 });
      const short = await room(mechanism, { voting_window: 600, quorum: 3 }, 1);
      await call(svc.base, 'POST', `/api/rooms/${short.slug}/choose`, {
        token: short.tokens[0],
        body: { choice: ALPHA_BEST[mechanism] },
      });
      clock.advance(600_000);
      const tied = await outcomeOf(tie.slug, tie.tokens[0]);
      // The majority family breaks no ties: half is not more than half, so the split is rejected.
      // Every other mechanism draws the seeded winner from the tie.
      const majority = mechanism === 'simple_majority' || mechanism === 'supermajority';
      expect(tied.decisions[0].outcome_status).toBe(majority ? 'rejected' : 'completed');
      if (!majority) expect(['alpha', 'beta']).toContain(tied.resolved_winner);
      expect(replayReceipt(payloadOf(tied.receipt_jws)).result).toBe('match');
      for (const [r, token] of [
        [silent, silent.tokens[0]],
        [short, short.tokens[0]],
      ] as const) {
        const outcome = await outcomeOf(r.slug, token);
        expect(outcome.decisions[0].outcome_status).toBe('no_quorum');
        expect(replayReceipt(payloadOf(outcome.receipt_jws)).result).toBe('match');
      }
    });
  }

  it('simple_majority: a 2–2 split is rejected at the window end; no responses give no_quorum', async () => {
    clock.set(T0);
    const split = await room('simple_majority', { voting_window: 600 }, 3);
    for (const [i, choice] of ['alpha', 'alpha', 'beta', 'beta'].entries()) {
      await call(svc.base, 'POST', `/api/rooms/${split.slug}/choose`, { token: split.tokens[i], body: { choice } });
    }
    const silent = await room('simple_majority', { voting_window: 600 });
    clock.advance(600_000);
    const rejected = await outcomeOf(split.slug, split.tokens[0]);
    expect(rejected.decisions[0]).toMatchObject({
      outcome_status: 'rejected',
      resolved_outcome: 'no_pass',
      resolved_winner: null,
    });
    expect(replayReceipt(payloadOf(rejected.receipt_jws)).result).toBe('match');
    const none = await outcomeOf(silent.slug, silent.tokens[0]);
    expect(none.decisions[0]).toMatchObject({ outcome_status: 'no_quorum', resolved_winner: null });
    expect(replayReceipt(payloadOf(none.receipt_jws)).result).toBe('match');
  });

  it('plurality and approval break top ties with the seeded draw, reproducibly from the receipt', async () => {
    clock.set(T0);
    for (const [mechanism, ballots] of [
      ['plurality', ['alpha', 'beta', 'gamma']],
      [
        'approval',
        [
          ['alpha', 'beta'],
          ['beta', 'alpha'],
        ],
      ],
    ] as const) {
      const r = await room(mechanism, { voting_window: 600 }, ballots.length - 1);
      for (const [i, choice] of ballots.entries()) {
        await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, { token: r.tokens[i], body: { choice } });
      }
      clock.advance(600_000);
      const outcome = await outcomeOf(r.slug, r.tokens[0]);
      expect(outcome.decisions[0].outcome_status).toBe('completed');
      const payload = payloadOf(outcome.receipt_jws);
      expect(['alpha', 'beta', 'gamma']).toContain(payload.svc.outcome.winning_option);
      expect(replayReceipt(payload).result).toBe('match');
      clock.set(T0);
    }
  });

  it('a quorum above the responses yields a no_quorum receipt for ranked mechanisms', async () => {
    clock.set(T0);
    const r = await room('ranked_choice', { quorum: 3, voting_window: 600 }, 1);
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[0],
      body: { choice: ['beta', 'alpha'] },
    });
    const dup = await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[1],
      body: { choice: ['beta', '#2'] },
    });
    expect(dup.body.error.details.reason).toBe('duplicate_in_ranking');
    clock.advance(600_000);
    const outcome = await outcomeOf(r.slug, r.tokens[0]);
    expect(outcome.decisions[0].outcome_status).toBe('no_quorum');
    expect(replayReceipt(payloadOf(outcome.receipt_jws)).result).toBe('match');
  });

  it('agreement: a split stays open through revisions; unanimity resolves after settling; expiry is honest', async () => {
    clock.set(T0);
    const r = await room('simple_majority', { early_close: true, settle_window: 20 }, 2);
    const asked = await call(svc.base, 'POST', `/api/rooms/${r.slug}/ask`, {
      token: r.tokens[0],
      body: { question: 'Agree on A?', options: ['A', 'B'], agreement: true },
    });
    expect(asked.status).toBe(409);
    clock.advance(3600_000);
    const after = await call(svc.base, 'POST', `/api/rooms/${r.slug}/ask`, {
      token: r.tokens[0],
      body: { question: 'Agree on A?', options: ['A', 'B'], agreement: true },
    });
    expect(after.body.decision.agreement).toBe(true);
    const seq = after.body.decision.seq;
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[0],
      body: { choice: 'A', decision: seq },
    });
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[1],
      body: { choice: 'A', decision: seq },
    });
    const split = await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[2],
      body: { choice: 'B', decision: seq },
    });
    expect(split.body).toMatchObject({ status: 'voting', agreement: true });
    expect(split.body.settling).toBeUndefined();
    const abstain = await call(svc.base, 'POST', `/api/rooms/${r.slug}/abstain`, {
      token: r.tokens[2],
      body: { reason: 'no', decision: seq },
    });
    expect(abstain.body.error.details.reason).toBe('abstain_on_agreement');
    const unanimous = await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[2],
      body: { choice: 'A', decision: seq },
    });
    expect(unanimous.body.settling).toEqual({ seals_in_seconds: 20, presumptive: 'A' });
    clock.advance(20_000);
    const outcome = await outcomeOf(r.slug, r.tokens[0]);
    const payload = payloadOf(outcome.receipt_jws);
    expect(payload.svc.outcome).toMatchObject({ status: 'completed', winning_option: 'A' });
    expect(payload.svc.mechanism.parameters).toEqual({
      question: 'Agree on A?',
      options: ['A', 'B'],
      agreement: true,
      ballot_mode: 'single_choice',
      quorum: 1,
      pass_threshold: 1,
      tie_break: 'no_pass',
      plurality_fallthrough: false,
    });
    expect(replayReceipt(payload).result).toBe('match');

    const expiring = await call(svc.base, 'POST', `/api/rooms/${r.slug}/ask`, {
      token: r.tokens[0],
      body: { question: 'Agree on B?', options: ['A', 'B'], agreement: true, voting_window: 600 },
    });
    const eseq = expiring.body.decision.seq;
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[0],
      body: { choice: 'A', decision: eseq },
    });
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[1],
      body: { choice: 'B', decision: eseq },
    });
    await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
      token: r.tokens[2],
      body: { choice: 'B', decision: eseq },
    });
    clock.advance(600_000);
    const expired = await outcomeOf(r.slug, r.tokens[0]);
    expect(expired.decisions.at(-1)).toMatchObject({
      outcome_status: 'rejected',
      resolved_winner: null,
      agreement: true,
    });
    expect(replayReceipt(payloadOf(expired.receipt_jws)).result).toBe('match');
    const refused = await call(svc.base, 'POST', '/api/rooms', {
      body: { about: 'x', config: { mechanism: 'approval' } },
    });
    const wrongRoom = await call(svc.base, 'POST', `/api/rooms/${refused.body.slug}/ask`, {
      token: refused.body.creator_token,
      body: { question: 'Agree?', options: ['A', 'B'], agreement: true },
    });
    expect(wrongRoom.body.error.details.reason).toBe('agreement_not_supported');
  });

  it('replays every receipt the service signs (random ballots, every mechanism)', async () => {
    const ballot = (mechanism: MechanismName) => {
      const option = fc.constantFrom('alpha', 'beta', 'gamma');
      switch (mechanism) {
        case 'approval':
          return fc.uniqueArray(option, { minLength: 1, maxLength: 3 });
        case 'ranked_choice':
        case 'ranked_pairwise':
          return fc.uniqueArray(option, { minLength: 1, maxLength: 3 });
        case 'score_vote':
          return fc.record({
            alpha: fc.integer({ min: 1, max: 5 }),
            beta: fc.integer({ min: 0, max: 5 }),
            gamma: fc.double({ min: 0, max: 5, noNaN: true }),
          });
        case 'quadratic_vote':
          return fc.record({
            alpha: fc.integer({ min: 1, max: 3 }),
            beta: fc.integer({ min: 0, max: 3 }),
            gamma: fc.integer({ min: 0, max: 3 }),
          });
        default:
          return option as fc.Arbitrary<unknown>;
      }
    };
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...WIRED_MECHANISMS)
          .chain((m) =>
            fc.tuple(
              fc.constant(m),
              fc.array(ballot(m), { minLength: 0, maxLength: 4 }),
              fc.integer({ min: 0, max: 2 }),
            ),
          ),
        async ([mechanism, ballots, abstainers]) => {
          clock.set(T0);
          const r = await room(mechanism, { voting_window: 600 }, ballots.length + abstainers);
          for (const [i, choice] of ballots.entries()) {
            const res = await call(svc.base, 'POST', `/api/rooms/${r.slug}/choose`, {
              token: r.tokens[i + 1],
              body: { choice },
            });
            expect(res.status, JSON.stringify(res.body)).toBe(200);
          }
          for (let i = 0; i < abstainers; i++) {
            await call(svc.base, 'POST', `/api/rooms/${r.slug}/abstain`, {
              token: r.tokens[ballots.length + 1 + i],
              body: { reason: 'pass' },
            });
          }
          clock.advance(600_000);
          const outcome = await outcomeOf(r.slug, r.tokens[0]);
          const report = replayReceipt(payloadOf(outcome.receipt_jws));
          expect(report, JSON.stringify(report)).toMatchObject({ result: 'match' });
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});
