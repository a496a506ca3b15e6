import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../../src/errors.js';
import {
  type EngineFamily,
  type EngineInput,
  engineParameters,
  jsKeyOrder,
  runEngine,
} from '../../../src/mechanisms/index.js';

const SEED = 'c0ffee00-0000-4000-8000-000000000000';

function input(
  parameters: Record<string, unknown>,
  votes: Record<string, unknown>[],
  extra: Partial<EngineInput> = {},
): EngineInput {
  return { parameters, eligible_voters: Math.max(votes.length, 1), votes, deterministic_seed: SEED, ...extra };
}

const generic = (options: string[], overrides: Record<string, unknown> = {}) => ({
  options,
  quorum: 0,
  ballot_mode: 'single_choice',
  pass_threshold: 0.5,
  pass_threshold_comparison: 'strict',
  tie_break: 'no_pass',
  plurality_fallthrough: false,
  ...overrides,
});
const ranked = (options: string[], tie_break = 'random_seeded') => ({ options, quorum: 0, tie_break });
const score = (options: string[], overrides: Record<string, unknown> = {}) => ({
  options,
  quorum: 0,
  min_score: 0,
  max_score: 5,
  tie_break: 'random_seeded',
  ...overrides,
});
const quadratic = (options: string[], overrides: Record<string, unknown> = {}) => ({
  options,
  quorum: 0,
  credits_per_voter: 9,
  tie_break: 'random_seeded',
  ...overrides,
});

const choice = (voter_id: string, c: unknown) => ({ voter_id, choice: c });
const ranking = (voter_id: string, r: unknown) => ({ voter_id, ranking: r });

function expectInvalid(run: () => unknown, field: string): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe('input.invalid');
    expect((error as ProtocolError).details?.field).toBe(field);
    return;
  }
  throw new Error(`expected a rejection naming ${field}`);
}

describe('JavaScript key order (04 §3.5)', () => {
  it('puts canonical array indices first, ascending, then the rest in slate order', () => {
    expect(jsKeyOrder(['b', '10', '2', 'a'])).toEqual(['2', '10', 'b', 'a']);
    expect(jsKeyOrder(['x', '0', '01', '-1', '1.5', '4294967295', '4294967294', ' 3'])).toEqual([
      '0',
      '4294967294',
      'x',
      '01',
      '-1',
      '1.5',
      '4294967295',
      ' 3',
    ]);
  });

  it.each([
    ['generic', generic(['b', '10', '2', 'a'])],
    ['instant_runoff', ranked(['b', '10', '2', 'a'])],
    ['schulze', ranked(['b', '10', '2', 'a'])],
    ['score', score(['b', '10', '2', 'a'])],
    ['quadratic', quadratic(['b', '10', '2', 'a'])],
  ] as const)('%s per_option_score follows it, even below quorum', (family, parameters) => {
    const below = runEngine(family, { ...input({ ...parameters, quorum: 1 }, []), eligible_voters: 3 });
    expect(Object.keys(below.per_option_score)).toEqual(['2', '10', 'b', 'a']);
  });

  it('handles option texts that collide with Object.prototype', () => {
    const options = ['__proto__', 'toString', 'constructor'];
    // JSON.parse creates an own "__proto__" key, as a decoded wire ballot would.
    const scores = JSON.parse('{"__proto__": 1}') as Record<string, number>;
    const scored = runEngine('score', input(score(options), [{ voter_id: 'v', scores }]));
    // Reading the inherited toString or constructor would make the ballot invalid.
    expect(scored).toMatchObject({ outcome: 'pass', winner: '__proto__', cast_votes: 1 });
    expect(Object.keys(scored.per_option_score)).toEqual(options);
    expect(Object.hasOwn(scored.per_option_score, '__proto__')).toBe(true);
    const plurality = runEngine('generic', input(generic(options), [choice('v', 'toString')]));
    expect(plurality.winner).toBe('toString');
    expect(plurality.per_option_score).toEqual(JSON.parse('{"__proto__": 0, "toString": 1, "constructor": 0}'));
  });
});

describe('parameter validation (04 §3.2)', () => {
  const votes = [choice('v1', 'a')];
  it.each([
    ['parameters.options', generic([])],
    ['parameters.options', generic(['a', 'a'])],
    ['parameters.options', { ...generic(['a']), options: ['a', 1] }],
    ['parameters.quorum', generic(['a'], { quorum: 1.5 })],
    ['parameters.quorum', generic(['a'], { quorum: -0.1 })],
    ['parameters.quorum', generic(['a'], { quorum: undefined })],
    ['parameters.pass_threshold', generic(['a'], { pass_threshold: 0 })],
    ['parameters.pass_threshold', generic(['a'], { pass_threshold: 1.01 })],
    ['parameters.pass_threshold_comparison', generic(['a'], { pass_threshold_comparison: 'loose' })],
    ['parameters.ballot_mode', generic(['a'], { ballot_mode: 'ranked' })],
    ['parameters.tie_break', generic(['a'], { tie_break: 'coin_flip' })],
    ['parameters.plurality_fallthrough', generic(['a'], { plurality_fallthrough: 'yes' })],
  ])('generic refuses bad %s', (field, parameters) => {
    expectInvalid(() => runEngine('generic', input(parameters, votes)), field);
  });

  it.each([
    ['parameters.min_score', score(['a'], { min_score: -1 })],
    ['parameters.max_score', score(['a'], { min_score: 5, max_score: 5 })],
    ['parameters.max_score', score(['a'], { max_score: Number.POSITIVE_INFINITY })],
    ['parameters.min_score', score(['a'], { min_score: Number.NaN })],
  ])('score refuses bad %s', (field, parameters) => {
    expectInvalid(() => runEngine('score', input(parameters, [])), field);
  });

  it.each([0, 1001, 2.5, '9'])('quadratic refuses credits_per_voter %s', (credits) => {
    expectInvalid(
      () => runEngine('quadratic', input(quadratic(['a'], { credits_per_voter: credits }), [])),
      'parameters.credits_per_voter',
    );
  });

  it('accepts the agreement preset without a comparison key (inclusive by default)', () => {
    const parameters = engineParameters('simple_majority', { options: ['x'], quorumFraction: 0, agreement: true });
    expect(runEngine('generic', input(parameters, [choice('p1', 'x')])).outcome).toBe('pass');
  });

  it('checks eligible_voters, participating_voters and the seed', () => {
    const parameters = generic(['a', 'b']);
    const two = [choice('v1', 'a'), choice('v2', 'a')];
    expectInvalid(() => runEngine('generic', { ...input(parameters, two), eligible_voters: -1 }), 'eligible_voters');
    expectInvalid(
      () => runEngine('generic', input(parameters, two, { participating_voters: 1 })),
      'participating_voters',
    );
    expectInvalid(
      () => runEngine('generic', input(parameters, two, { eligible_voters: 3, participating_voters: 4 })),
      'participating_voters',
    );
    expectInvalid(
      () => runEngine('generic', input(parameters, two, { eligible_voters: 3, participating_voters: 2.5 })),
      'participating_voters',
    );
    expectInvalid(
      () => runEngine('generic', { ...input(parameters, two), deterministic_seed: 7 as unknown as string }),
      'deterministic_seed',
    );
  });

  it('compares participating_voters after cleaning', () => {
    // Three votes arrive but one is a duplicate: two clean ballots, so 2 participants is acceptable.
    const votes3 = [choice('v1', 'a'), choice('v1', 'b'), choice('v2', 'a')];
    const output = runEngine(
      'generic',
      input(generic(['a', 'b']), votes3, { eligible_voters: 2, participating_voters: 2 }),
    );
    expect(output.cast_votes).toBe(2);
  });

  it('refuses an unknown engine family', () => {
    expectInvalid(() => runEngine('borda' as EngineFamily, input(generic(['a']), [])), 'family');
  });
});

describe('ballot cleaning (04 §3.3)', () => {
  it('lets a later invalid ballot remove an earlier valid one', () => {
    const output = runEngine(
      'generic',
      input(generic(['a', 'b']), [choice('v1', 'a'), choice('v1', 'zzz'), choice('v2', 'b')]),
    );
    expect(output.cast_votes).toBe(1);
    expect(output.per_option_score).toEqual({ a: 0, b: 1 });
    expect(output.trace.invalid_votes).toBe(1);
    expect(output.trace.duplicate_voter_ids).toEqual(['v1']);
  });

  it('lists a voter once per repetition', () => {
    const output = runEngine('generic', input(generic(['a']), [choice('v', 'a'), choice('v', 'a'), choice('v', 'a')]));
    expect(output.trace.duplicate_voter_ids).toEqual(['v', 'v']);
    expect(output.cast_votes).toBe(1);
  });

  it('treats a vote without a string voter_id as invalid', () => {
    const output = runEngine('generic', input(generic(['a']), [{ choice: 'a' }, { voter_id: 3, choice: 'a' }]));
    expect(output.trace.invalid_votes).toBe(2);
    expect(output.cast_votes).toBe(0);
  });

  it('keeps weight ≤ 0 generic ballots in cast_votes without adding to the tally', () => {
    const output = runEngine(
      'generic',
      input(generic(['a', 'b']), [{ voter_id: 'v1', choice: 'a', weight: 0 }, choice('v2', 'b'), choice('v3', 'b')]),
    );
    expect(output.cast_votes).toBe(3);
    expect(output.per_option_score).toEqual({ a: 0, b: 2 });
    expect(output.outcome).toBe('pass');
  });

  it('refuses single-choice arrays of several options, accepts a one-entry array', () => {
    const output = runEngine('generic', input(generic(['a', 'b']), [choice('v1', ['a', 'b']), choice('v2', ['a'])]));
    expect(output.trace.invalid_votes).toBe(1);
    expect(output.per_option_score).toEqual({ a: 1, b: 0 });
  });

  it('does not de-duplicate approval entries (the service does, at submission)', () => {
    const parameters = generic(['a', 'b'], { ballot_mode: 'approval' });
    const output = runEngine('generic', input(parameters, [choice('v1', ['a', 'a'])]));
    expect(output.per_option_score).toEqual({ a: 2, b: 0 });
  });

  it('refuses non-positive or non-finite weights in the weighted families', () => {
    const votes = [
      { voter_id: 'v1', ranking: ['a'], weight: 0 },
      { voter_id: 'v2', ranking: ['a'], weight: Number.POSITIVE_INFINITY },
      { voter_id: 'v3', ranking: ['a'], weight: '1' },
      ranking('v4', 'a'),
      ranking('v5', []),
      ranking('v6', ['zzz']),
    ];
    for (const family of ['instant_runoff', 'schulze'] as const) {
      const output = runEngine(family, input(ranked(['a', 'b']), votes));
      expect(output.trace.invalid_votes).toBe(6);
    }
  });
});

describe('quorum not met (04 §3.4)', () => {
  const below = { eligible_voters: 4, participating_voters: 1 };

  it('generic keeps its tally and reports threshold_met false', () => {
    const output = runEngine('generic', input(generic(['a', 'b'], { quorum: 0.5 }), [choice('v1', 'a')], below));
    expect(output).toMatchObject({
      outcome: 'no_pass',
      winner: null,
      quorum_met: false,
      threshold_met: false,
      per_option_score: { a: 1, b: 0 },
    });
  });

  it('instant runoff zeroes every option and records no rounds', () => {
    const output = runEngine(
      'instant_runoff',
      input({ ...ranked(['a', 'b']), quorum: 0.5 }, [ranking('v1', ['a'])], below),
    );
    expect(output).toMatchObject({
      outcome: 'no_pass',
      winner: null,
      quorum_met: false,
      per_option_score: { a: 0, b: 0 },
    });
    expect(output.trace.rounds).toEqual([]);
  });

  it('Schulze zeroes matrices, scores and tied_options', () => {
    const output = runEngine('schulze', input({ ...ranked(['a', 'b']), quorum: 0.5 }, [ranking('v1', ['a'])], below));
    expect(output.per_option_score).toEqual({ a: 0, b: 0 });
    expect(output.trace.pairwise_preferences).toEqual({ a: { a: 0, b: 0 }, b: { a: 0, b: 0 } });
    expect(output.trace.strongest_paths).toEqual({ a: { a: 0, b: 0 }, b: { a: 0, b: 0 } });
    expect(output.trace.tied_options).toEqual([]);
  });

  it('score zeroes scores and total_weight; quadratic zeroes scores but still reports spending', () => {
    const scored = runEngine(
      'score',
      input(score(['a'], { quorum: 0.5 }), [{ voter_id: 'v1', scores: { a: 5 } }], below),
    );
    expect(scored.per_option_score).toEqual({ a: 0 });
    expect(scored.trace.total_weight).toBe(0);
    const spent = runEngine(
      'quadratic',
      input(quadratic(['a'], { quorum: 0.5 }), [{ voter_id: 'v1', allocation: { a: 4 } }], below),
    );
    expect(spent.per_option_score).toEqual({ a: 0 });
    expect(spent.trace.spent_credits_by_voter).toEqual({ v1: 4 });
  });

  it('never meets quorum with zero eligible voters', () => {
    const output = runEngine('generic', { ...input(generic(['a']), []), eligible_voters: 0 });
    expect(output.quorum_met).toBe(false);
  });

  it('counts zero ballots as quorate when the fraction is 0', () => {
    const output = runEngine('generic', { ...input(generic(['a']), []), eligible_voters: 3 });
    expect(output).toMatchObject({ quorum_met: true, outcome: 'no_pass', threshold_met: false });
  });
});

describe('generic tie rules and reasons (04 §4, §3.7)', () => {
  const approvalTie = (tie_break: string) =>
    input(generic(['x', 'y', 'z'], { ballot_mode: 'approval', tie_break }), [
      choice('v1', ['y', 'x']),
      choice('v2', ['x', 'y']),
    ]);

  it('no_pass above the threshold → tied', () => {
    const output = runEngine('generic', approvalTie('no_pass'));
    expect(output).toMatchObject({ outcome: 'tied', winner: null, threshold_met: true });
    expect(output.trace.tie_resolution_reason).toBe('no_pass tie-break: tie not resolved');
  });

  it('first_listed above the threshold → the earliest option', () => {
    const output = runEngine('generic', approvalTie('first_listed'));
    expect(output).toMatchObject({ outcome: 'pass', winner: 'x' });
    expect(output.trace.tie_resolution_reason).toBe("first_listed: chose 'x' as earliest tied option");
  });

  it('fall-through tie under no_pass → no_pass with a reason', () => {
    const parameters = generic(['a', 'b', 'c'], { plurality_fallthrough: true });
    const output = runEngine('generic', input(parameters, [choice('v1', 'a'), choice('v2', 'b'), choice('v3', 'c')]));
    expect(output).toMatchObject({ outcome: 'no_pass', winner: null, threshold_met: false });
    expect(output.trace.tie_resolution_reason).toBe('no_pass tie-break: tie not resolved');
  });

  it('fall-through tie under first_listed names the rule and the tie', () => {
    const parameters = generic(['a', 'b', 'c'], { plurality_fallthrough: true, tie_break: 'first_listed' });
    const output = runEngine('generic', input(parameters, [choice('v1', 'c'), choice('v2', 'b'), choice('v3', 'a')]));
    expect(output).toMatchObject({ outcome: 'plurality_pass', winner: 'a' });
    expect(output.trace.tie_resolution_reason).toBe(
      "plurality_fallthrough + first_listed: 'a' picked from 3-way tie at 1/3",
    );
  });

  it('never falls through with nothing scored', () => {
    const parameters = generic(['a'], { plurality_fallthrough: true, tie_break: 'first_listed' });
    const output = runEngine('generic', input(parameters, [{ voter_id: 'v1', choice: 'a', weight: -1 }]));
    expect(output).toMatchObject({ outcome: 'no_pass', winner: null });
  });

  it('carries no reason when no tie rule acted', () => {
    const output = runEngine('generic', input(generic(['a', 'b']), [choice('v1', 'a')]));
    expect(output.trace).not.toHaveProperty('tie_resolution_reason');
    expect(Object.keys(output)).toEqual([
      'outcome',
      'winner',
      'per_option_score',
      'cast_votes',
      'eligible_voters',
      'quorum_met',
      'threshold_met',
      'trace',
    ]);
  });
});

describe('instant runoff details (04 §5)', () => {
  it('resolves total exhaustion by first_listed and names it', () => {
    const output = runEngine('instant_runoff', {
      ...input(ranked(['c', 'a'], 'first_listed'), []),
      eligible_voters: 2,
    });
    expect(output).toMatchObject({ outcome: 'pass', winner: 'c' });
    expect(output.trace.tie_resolution_reason).toBe('all ballots exhausted; first_listed resolved to c');
  });

  it('reports total exhaustion under no_pass as tied', () => {
    const output = runEngine('instant_runoff', { ...input(ranked(['a', 'b'], 'no_pass'), []), eligible_voters: 2 });
    expect(output).toMatchObject({ outcome: 'tied', winner: null });
    expect(output.trace.tie_resolution_reason).toBe('all ballots exhausted; no_pass tie-break or no remaining options');
  });

  it('names the random_seeded exhaustion pick', () => {
    const output = runEngine('instant_runoff', {
      ...input(ranked(['A', 'B', 'C']), []),
      eligible_voters: 2,
      deterministic_seed: 'irv-empty',
    });
    expect(output.trace.tie_resolution_reason).toBe('all ballots exhausted; random_seeded resolved to C');
  });

  it('lets the last remaining option win without a majority', () => {
    const votes = [
      ranking('1', ['a']),
      ranking('2', ['b']),
      ranking('3', ['b']),
      ranking('4', ['c']),
      ranking('5', ['c']),
    ];
    const output = runEngine('instant_runoff', input(ranked(['a', 'b', 'c'], 'first_listed'), votes));
    // Round 1 eliminates a; round 2 ties b and c at 2 of 4 active: first_listed drops c (listed last).
    expect(output).toMatchObject({ outcome: 'pass', winner: 'b', per_option_score: { b: 2 } });
    expect((output.trace.rounds as unknown[]).length).toBe(3);
    expect(output.trace).not.toHaveProperty('tie_resolution_reason');
  });

  it('has no threshold_met key outside the generic family', () => {
    const output = runEngine('instant_runoff', input(ranked(['a']), [ranking('1', ['a'])]));
    expect(output).not.toHaveProperty('threshold_met');
  });
});

describe('Schulze details (04 §6)', () => {
  const cycle = [ranking('1', ['A', 'B', 'C']), ranking('2', ['B', 'C', 'A']), ranking('3', ['C', 'A', 'B'])];

  it('reports a no_pass top tie as tied', () => {
    const output = runEngine('schulze', input(ranked(['A', 'B', 'C'], 'no_pass'), cycle));
    expect(output).toMatchObject({ outcome: 'tied', winner: null });
    expect(output.trace.tie_resolution_reason).toBe('no_pass tie-break: tie not resolved');
    expect(output.trace.tied_options).toEqual(['A', 'B', 'C']);
  });

  it('words a first_listed top tie', () => {
    const output = runEngine('schulze', input(ranked(['C', 'A', 'B'], 'first_listed'), cycle));
    expect(output.winner).toBe('C');
    expect(output.trace.tie_resolution_reason).toBe("first_listed: chose 'C' from 3-way top tie");
  });
});

describe('score and quadratic details (04 §7)', () => {
  it('scores with a positive min_score fill unscored options with it', () => {
    const output = runEngine(
      'score',
      input(score(['a', 'b'], { min_score: 1 }), [{ voter_id: 'v', scores: { a: 3 } }]),
    );
    expect(output.per_option_score).toEqual({ a: 3, b: 1 });
    expect(output.winner).toBe('a');
  });

  it('score with nothing cast is no_pass', () => {
    expect(runEngine('score', { ...input(score(['a']), []), eligible_voters: 2 }).outcome).toBe('no_pass');
  });

  it('words a first_listed score tie and weights values', () => {
    const votes = [
      { voter_id: 'v1', scores: { a: 2 }, weight: 2 },
      { voter_id: 'v2', scores: { b: 4 } },
    ];
    const output = runEngine('score', input(score(['b', 'a'], { tie_break: 'first_listed' }), votes));
    expect(output.per_option_score).toEqual({ b: 4, a: 4 });
    expect(output.trace.total_weight).toBe(3);
    expect(output.trace.tie_resolution_reason).toBe("first_listed: chose 'b' from 2-way tie");
  });

  it('refuses score ballots with non-numeric, null or non-object values', () => {
    const votes = [
      { voter_id: 'v1', scores: { a: '5' } },
      { voter_id: 'v2', scores: { a: null } },
      { voter_id: 'v3', scores: ['5'] },
      { voter_id: 'v4', scores: { a: Number.NaN } },
    ];
    expect(runEngine('score', input(score(['a']), votes)).trace.invalid_votes).toBe(4);
  });

  it('quadratic ignores keys that are not options and refuses over-budget or empty allocations', () => {
    const votes = [
      { voter_id: 'v1', allocation: { a: 9, zzz: 100 } },
      { voter_id: 'v2', allocation: { a: 5, b: 5 } },
      { voter_id: 'v3', allocation: { a: 0.5 } },
      { voter_id: 'v4', allocation: { a: -1 } },
    ];
    const output = runEngine('quadratic', input(quadratic(['a', 'b']), votes));
    expect(output.cast_votes).toBe(1);
    expect(output.per_option_score).toEqual({ a: 3, b: 0 });
    expect(output.trace.spent_credits_by_voter).toEqual({ v1: 9 });
  });

  it('quadratic drops a replaced voter from spent_credits_by_voter', () => {
    const votes = [
      { voter_id: 'v1', allocation: { a: 4 } },
      { voter_id: 'v2', allocation: { b: 1 } },
      { voter_id: 'v1', allocation: { a: 50 } },
    ];
    const output = runEngine('quadratic', input(quadratic(['a', 'b']), votes));
    expect(output.trace.spent_credits_by_voter).toEqual({ v2: 1 });
    expect(output.winner).toBe('b');
  });
});
