import { describe, expect, it } from 'vitest';
import { type EngineInput, type EngineOutput, isLocked, jsKeyOrder, runEngine } from '../../../src/mechanisms/index.js';
import {
  bottomTieCanonical,
  exhaustedCanonical,
  seededDraw,
  topTieCanonical,
} from '../../../src/mechanisms/tie-break.js';
import { familyOf, loadVector } from './vectors.js';

type Expected = Record<string, unknown>;

interface MechanismCase {
  id: string;
  input: EngineInput;
  result: Expected;
}

const TOP_LEVEL_FIELDS = ['outcome', 'winner', 'cast_votes', 'eligible_voters', 'quorum_met', 'threshold_met'];
const TRACE_FIELDS = [
  'invalid_votes',
  'duplicate_voter_ids',
  'rounds',
  'tied_options',
  'total_weight',
  'spent_credits_by_voter',
  'tie_resolution_reason',
  'pairwise_preferences',
  'strongest_paths',
];

/** Compares every field the vector states, wherever the README says it may live. */
function expectResult(actual: EngineOutput, expected: Expected): void {
  for (const field of TOP_LEVEL_FIELDS) {
    if (field in expected) expect(actual[field as keyof EngineOutput], field).toEqual(expected[field]);
  }
  if ('per_option_score' in expected) {
    expect(actual.per_option_score).toEqual(expected.per_option_score);
    const keyOrder =
      (expected.per_option_score_key_order as string[] | undefined) ?? Object.keys(expected.per_option_score as object);
    expect(Object.keys(actual.per_option_score)).toEqual(keyOrder);
  }
  const summary = expected.trace_summary as Expected | undefined;
  for (const field of TRACE_FIELDS) {
    if (summary !== undefined && field in summary) expect(actual.trace[field], field).toEqual(summary[field]);
    if (field in expected) expect(actual.trace[field], field).toEqual(expected[field]);
  }
  if (summary !== undefined && !('tie_resolution_reason' in summary) && !('tie_resolution_reason' in expected)) {
    expect(actual.trace.tie_resolution_reason).toBeUndefined();
  }
  if ('eliminated_per_round' in expected) {
    const rounds = actual.trace.rounds as { eliminated: string[] }[];
    expect(rounds.map((round) => round.eliminated)).toEqual(expected.eliminated_per_round);
  }
}

describe('test/vectors/mechanisms.json', () => {
  const { mechanisms } = loadVector<{ mechanisms: MechanismCase[] }>('mechanisms.json');

  it('has cases to run', () => {
    expect(mechanisms.length).toBeGreaterThanOrEqual(20);
  });

  it.each(mechanisms.map((c) => [c.id, c] as const))('%s', (_id, vector) => {
    const output = runEngine(familyOf(vector.id, vector.input), vector.input);
    expectResult(output, vector.result);
    expect(output.trace.parameters).toEqual(vector.input.parameters);
  });

  it.each(mechanisms.map((c) => [c.id, c] as const))('%s is byte-for-byte deterministic', (_id, vector) => {
    const family = familyOf(vector.id, vector.input);
    expect(JSON.stringify(runEngine(family, vector.input))).toBe(JSON.stringify(runEngine(family, vector.input)));
  });
});

describe('test/vectors/lock-checks.json', () => {
  interface LockCase {
    id: string;
    check: 'generic' | 'score' | 'quadratic';
    input: EngineInput;
    locked: boolean;
  }
  const vectors = loadVector<{ lock_checks: Record<string, boolean>; cases: LockCase[] }>('lock-checks.json');
  const mechanismFor = { generic: 'simple_majority', score: 'score_vote', quadratic: 'quadratic_vote' } as const;

  it('lists every case in the lock_checks map with the same answer', () => {
    expect(Object.fromEntries(vectors.cases.map((c) => [c.id, c.locked]))).toEqual(vectors.lock_checks);
  });

  it.each(vectors.cases.map((c) => [c.id, c] as const))('%s', (_id, vector) => {
    expect(isLocked(mechanismFor[vector.check], false, vector.input)).toBe(vector.locked);
  });
});

describe('test/vectors/tie-break.json', () => {
  interface SeededExample {
    seed: string;
    canonical: string;
    uint32: number;
    pick: string;
  }
  interface DerivedExample {
    id: string;
    family: string;
    seed: string;
    canonical: string;
    uint32: number;
    index: number;
    pick?: string;
    eliminated?: string;
    wrong_pick_if_ties_kept_in_slate_order?: string;
    engine_case?: { input: EngineInput; result: Expected };
  }
  const vectors = loadVector<{
    random_seeded_index: { examples: SeededExample[] };
    derived_examples: DerivedExample[];
  }>('tie-break.json');

  /** The list the index selects from, and the text our own builders produce for the same inputs. */
  function rebuild(canonical: string): { list: string[]; rebuilt: string } {
    const payload = JSON.parse(canonical) as Record<string, unknown>;
    if ('exhausted' in payload) {
      const remaining = payload.remaining as string[];
      return { list: remaining, rebuilt: exhaustedCanonical(remaining) };
    }
    if ('round' in payload) {
      const tied = payload.tied as string[];
      return { list: tied, rebuilt: bottomTieCanonical(payload.round as number, payload.remaining as string[], tied) };
    }
    const ties = payload.ties as string[];
    return { list: ties, rebuilt: topTieCanonical(payload.options as string[], ties) };
  }

  it.each(vectors.random_seeded_index.examples.map((e) => [e.seed, e] as const))(
    'generic example %s',
    (_s, example) => {
      const { list, rebuilt } = rebuild(example.canonical);
      expect(rebuilt).toBe(example.canonical);
      const draw = seededDraw(example.seed, example.canonical, list.length);
      expect(draw.uint32).toBe(example.uint32);
      expect(list[draw.index]).toBe(example.pick);
    },
  );

  it.each(vectors.derived_examples.map((e) => [e.id, e] as const))(
    '%s: digest, index and canonical text',
    (_id, example) => {
      const { list, rebuilt } = rebuild(example.canonical);
      expect(rebuilt).toBe(example.canonical);
      const draw = seededDraw(example.seed, example.canonical, list.length);
      expect(draw.uint32).toBe(example.uint32);
      expect(draw.index).toBe(example.uint32 % list.length);
      expect(draw.index).toBe(example.index);
      expect(list[draw.index]).toBe(example.pick ?? example.eliminated);
    },
  );

  const keyOrderExamples = vectors.derived_examples.filter((e) => e.wrong_pick_if_ties_kept_in_slate_order);

  it.each(keyOrderExamples.map((e) => [e.id, e] as const))('%s: ties follow JavaScript key order', (_id, example) => {
    const { options } = JSON.parse(example.canonical) as { options: string[] };
    expect(topTieCanonical(options, jsKeyOrder(options))).toBe(example.canonical);
    // An implementation that keeps ties in slate order hashes a different payload and picks another option.
    const naive = seededDraw(example.seed, topTieCanonical(options, options), options.length);
    expect(options[naive.index]).toBe(example.wrong_pick_if_ties_kept_in_slate_order);
    expect(example.wrong_pick_if_ties_kept_in_slate_order).not.toBe(example.pick);
  });

  const engineCases = vectors.derived_examples.filter((e) => e.engine_case !== undefined);

  it.each(engineCases.map((e) => [e.id, e] as const))('%s: engine case', (_id, example) => {
    const engineCase = example.engine_case;
    if (engineCase === undefined) throw new Error('filtered above');
    const output = runEngine(familyOf(example.id, engineCase.input), engineCase.input);
    expectResult(output, engineCase.result);
    expect(output.winner).toBe(example.pick);
  });
});
