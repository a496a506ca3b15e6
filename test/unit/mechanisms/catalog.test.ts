import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/errors.js';
import {
  type EngineOutput,
  engineFamily,
  engineParameters,
  engineVote,
  isMechanismName,
  RESERVED_MECHANISMS,
  receiptOutcome,
  receiptStatus,
  WIRED_MECHANISMS,
} from '../../../src/mechanisms/index.js';
import { jcs } from '../../../src/mechanisms/tie-break.js';

describe('mechanism names', () => {
  it('wires exactly the eight mechanisms, in protocol order', () => {
    expect(WIRED_MECHANISMS).toEqual([
      'simple_majority',
      'supermajority',
      'plurality',
      'approval',
      'ranked_choice',
      'ranked_pairwise',
      'score_vote',
      'quadratic_vote',
    ]);
    expect(RESERVED_MECHANISMS).toEqual(['budget_allocation', 'conviction_vote', 'bilateral_negotiation']);
  });

  it('recognises wired names only', () => {
    for (const name of WIRED_MECHANISMS) expect(isMechanismName(name)).toBe(true);
    for (const name of [...RESERVED_MECHANISMS, 'generic_vote', 'Plurality', '', null, 3, undefined]) {
      expect(isMechanismName(name)).toBe(false);
    }
  });

  it('maps every mechanism to its engine family', () => {
    expect(WIRED_MECHANISMS.map(engineFamily)).toEqual([
      'generic',
      'generic',
      'generic',
      'generic',
      'instant_runoff',
      'schulze',
      'score',
      'quadratic',
    ]);
  });
});

describe('engineParameters (04 §2)', () => {
  const settings = { options: ['alpha', 'beta'], quorumFraction: 0.25, agreement: false };

  it.each([
    [
      'simple_majority',
      {
        ballot_mode: 'single_choice',
        pass_threshold: 0.5,
        pass_threshold_comparison: 'strict',
        tie_break: 'no_pass',
        plurality_fallthrough: false,
      },
    ],
    [
      'supermajority',
      {
        ballot_mode: 'single_choice',
        pass_threshold: 0.6666666666666666,
        pass_threshold_comparison: 'inclusive',
        tie_break: 'no_pass',
        plurality_fallthrough: false,
      },
    ],
    [
      'plurality',
      {
        ballot_mode: 'single_choice',
        pass_threshold: 0.5,
        pass_threshold_comparison: 'strict',
        tie_break: 'random_seeded',
        plurality_fallthrough: true,
      },
    ],
    [
      'approval',
      {
        ballot_mode: 'approval',
        pass_threshold: 0.5,
        pass_threshold_comparison: 'strict',
        tie_break: 'random_seeded',
        plurality_fallthrough: true,
      },
    ],
    ['ranked_choice', { tie_break: 'random_seeded' }],
    ['ranked_pairwise', { tie_break: 'random_seeded' }],
    ['score_vote', { min_score: 0, max_score: 5, tie_break: 'random_seeded' }],
    ['quadratic_vote', { credits_per_voter: 9, tie_break: 'random_seeded' }],
  ] as const)('%s: options, quorum, then the table in order', (mechanism, table) => {
    const parameters = engineParameters(mechanism, settings);
    expect(parameters).toEqual({ options: ['alpha', 'beta'], quorum: 0.25, ...table });
    expect(Object.keys(parameters)).toEqual(['options', 'quorum', ...Object.keys(table)]);
  });

  it('uses the fixed agreement preset, without a comparison key and with quorum 1', () => {
    for (const mechanism of ['simple_majority', 'supermajority'] as const) {
      const parameters = engineParameters(mechanism, { ...settings, agreement: true });
      expect(parameters).toEqual({
        options: ['alpha', 'beta'],
        quorum: 1,
        ballot_mode: 'single_choice',
        pass_threshold: 1,
        tie_break: 'no_pass',
        plurality_fallthrough: false,
      });
      expect(parameters).not.toHaveProperty('pass_threshold_comparison');
    }
  });

  it('refuses agreement outside majority-family rooms', () => {
    const attempt = () => engineParameters('approval', { ...settings, agreement: true });
    expect(attempt).toThrow(ProtocolError);
    expect(attempt).toThrow(
      expect.objectContaining({
        code: 'input.invalid',
        details: expect.objectContaining({ reason: 'agreement_not_supported' }),
      }),
    );
  });

  it('reproduces the receipt parameters example of 05 §2.3', () => {
    const parameters = engineParameters('plurality', {
      options: ['alpha', 'beta', 'gamma'],
      quorumFraction: 1 / 3,
      agreement: false,
    });
    expect(jcs({ question: 'Which option?', ...parameters })).toBe(
      '{"ballot_mode":"single_choice","options":["alpha","beta","gamma"],"pass_threshold":0.5,' +
        '"pass_threshold_comparison":"strict","plurality_fallthrough":true,"question":"Which option?",' +
        '"quorum":0.3333333333333333,"tie_break":"random_seeded"}',
    );
  });

  it('names an empty slate without complaint (sealed without the engine)', () => {
    expect(engineParameters('score_vote', { options: [], quorumFraction: 0, agreement: false }).options).toEqual([]);
  });

  it('copies the options', () => {
    const options = ['a'];
    const parameters = engineParameters('plurality', { options, quorumFraction: 0, agreement: false });
    options.push('b');
    expect(parameters.options).toEqual(['a']);
  });
});

describe('engineVote (04 §2)', () => {
  it('uses the family ballot key', () => {
    expect(engineVote('plurality', 'p:1', 'alpha')).toEqual({ voter_id: 'p:1', choice: 'alpha' });
    expect(engineVote('approval', 'p:1', ['alpha', 'beta'])).toEqual({ voter_id: 'p:1', choice: ['alpha', 'beta'] });
    expect(engineVote('ranked_choice', 'p:1', ['b', 'a'])).toEqual({ voter_id: 'p:1', ranking: ['b', 'a'] });
    expect(engineVote('ranked_pairwise', 'p:1', ['b', 'a'])).toEqual({ voter_id: 'p:1', ranking: ['b', 'a'] });
    expect(engineVote('score_vote', 'p:1', { a: 5 })).toEqual({ voter_id: 'p:1', scores: { a: 5 } });
    expect(engineVote('quadratic_vote', 'p:1', { a: 4 })).toEqual({ voter_id: 'p:1', allocation: { a: 4 } });
  });

  it('omits the weight and does not alias the stored ballot', () => {
    const ballot = ['a'];
    const vote = engineVote('approval', 'p:1', ballot);
    ballot.push('b');
    expect(vote).toEqual({ voter_id: 'p:1', choice: ['a'] });
    expect(vote).not.toHaveProperty('weight');
  });
});

describe('receiptStatus (05 §2.4)', () => {
  const output = (outcome: EngineOutput['outcome'], quorum_met: boolean): EngineOutput => ({
    outcome,
    winner: outcome === 'pass' || outcome === 'plurality_pass' ? 'a' : null,
    per_option_score: { a: 1 },
    cast_votes: 1,
    eligible_voters: 2,
    quorum_met,
    trace: {},
  });

  it.each([
    ['pass', true, 'completed'],
    ['plurality_pass', true, 'completed'],
    ['no_pass', false, 'no_quorum'],
    ['no_pass', true, 'rejected'],
    ['tied', true, 'tied'],
  ] as const)('%s with quorum_met %s → %s', (outcome, quorumMet, status) => {
    expect(receiptStatus(output(outcome, quorumMet), 1)).toBe(status);
  });

  it('forces no_quorum with a null winner when nobody responded', () => {
    expect(receiptStatus(output('pass', true), 0)).toBe('no_quorum');
    expect(receiptOutcome(output('pass', true), 0)).toEqual({
      status: 'no_quorum',
      winning_option: null,
      tallies: { a: 1 },
    });
    expect(receiptOutcome(output('pass', true), 1)).toEqual({
      status: 'completed',
      winning_option: 'a',
      tallies: { a: 1 },
    });
  });
});
