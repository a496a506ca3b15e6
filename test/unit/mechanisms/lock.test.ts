import { describe, expect, it } from 'vitest';
import { type EngineInput, isLocked, type MechanismName, runMechanism } from '../../../src/mechanisms/index.js';
import { engineInputFor } from './receipt-fixture.js';

function locked(
  kind: MechanismName,
  options: string[],
  ballots: [string, string | string[] | Record<string, number>][],
  eligibleVoters: number,
  extra: { abstainers?: string[]; agreement?: boolean } = {},
): boolean {
  const input: EngineInput = engineInputFor({ kind, options, ballots, eligibleVoters, ...extra });
  return isLocked(kind, extra.agreement ?? false, input, runMechanism(kind, input));
}

describe('lock checks (04 §8)', () => {
  it('locks every mechanism at complete turnout, whatever the result', () => {
    expect(
      locked(
        'simple_majority',
        ['a', 'b'],
        [
          ['1', 'a'],
          ['2', 'b'],
        ],
        2,
      ),
    ).toBe(true);
    expect(locked('ranked_choice', ['a', 'b'], [['1', ['a']]], 1)).toBe(true);
    expect(locked('ranked_pairwise', ['a', 'b'], [['1', ['a']]], 1)).toBe(true);
    expect(
      locked(
        'score_vote',
        ['a', 'b'],
        [
          ['1', { a: 1 }],
          ['2', { b: 1 }],
        ],
        2,
      ),
    ).toBe(true);
  });

  it('counts abstentions as responses when computing what remains', () => {
    // 2 of 3 for a, plus one abstention: nothing remains.
    expect(
      locked(
        'simple_majority',
        ['a', 'b'],
        [
          ['1', 'a'],
          ['2', 'a'],
        ],
        3,
        { abstainers: ['3'] },
      ),
    ).toBe(true);
    // Without the abstention one ballot remains; 2/3 still passes, b trails by 2 > 1, a (2) > 1.
    expect(
      locked(
        'simple_majority',
        ['a', 'b'],
        [
          ['1', 'a'],
          ['2', 'a'],
        ],
        3,
      ),
    ).toBe(true);
    expect(locked('simple_majority', ['a', 'b'], [['1', 'a']], 3, { abstainers: ['3'] })).toBe(false);
  });

  it('never locks ranked mechanisms before complete turnout', () => {
    const ballots: [string, string[]][] = [
      ['1', ['a']],
      ['2', ['a']],
      ['3', ['a']],
      ['4', ['a']],
    ];
    expect(locked('ranked_choice', ['a', 'b'], ballots, 5)).toBe(false);
    expect(locked('ranked_pairwise', ['a', 'b'], ballots, 5)).toBe(false);
  });

  it('locks a plurality leader without the threshold check', () => {
    // a 3, c 1, 3 ballots outstanding: a leads c by 2, not by more than 3 → open.
    expect(
      locked(
        'plurality',
        ['a', 'b', 'c'],
        [
          ['1', 'a'],
          ['2', 'a'],
          ['3', 'a'],
          ['4', 'c'],
        ],
        7,
      ),
    ).toBe(false);
    // a 4, c 1, 2 ballots outstanding: 4 − 1 > 2 and 4 > 2 → locked.
    const ballots: [string, string][] = [
      ['1', 'a'],
      ['2', 'a'],
      ['3', 'a'],
      ['4', 'a'],
      ['5', 'c'],
    ];
    expect(locked('plurality', ['a', 'b', 'c'], ballots, 7)).toBe(true);
  });

  it('requires the winner to outscore the remaining ballots (an unproposed option could win)', () => {
    // A single-option slate has no rivals, so only this rule keeps it open.
    expect(locked('plurality', ['a'], [['1', 'a']], 3)).toBe(false);
    expect(
      locked(
        'plurality',
        ['a'],
        [
          ['1', 'a'],
          ['2', 'a'],
          ['3', 'a'],
        ],
        5,
      ),
    ).toBe(true);
  });

  it('keeps the supermajority threshold against every completion', () => {
    // 3 of 4 for yes, 1 outstanding: 3/4 ≥ 2/3 even if it goes to no, and 3 − 0 > 1 → locked.
    expect(
      locked(
        'supermajority',
        ['yes', 'no'],
        [
          ['1', 'yes'],
          ['2', 'yes'],
          ['3', 'yes'],
        ],
        4,
      ),
    ).toBe(true);
    // 2 of 4 for yes, 2 remaining: 2/4 < 2/3 → open.
    expect(
      locked(
        'supermajority',
        ['yes', 'no'],
        [
          ['1', 'yes'],
          ['2', 'yes'],
        ],
        4,
      ),
    ).toBe(false);
  });

  it('does not lock an unresolved generic result', () => {
    expect(
      locked(
        'simple_majority',
        ['a', 'b'],
        [
          ['1', 'a'],
          ['2', 'b'],
        ],
        9,
      ),
    ).toBe(false);
  });

  it('score lock needs a lead over remaining × (max − min)', () => {
    expect(
      locked(
        'score_vote',
        ['a', 'b'],
        [
          ['1', { a: 5 }],
          ['2', { a: 5 }],
        ],
        3,
      ),
    ).toBe(true);
    expect(locked('score_vote', ['a', 'b'], [['1', { a: 5 }]], 2)).toBe(false);
  });

  it('quadratic lock needs a lead over remaining × √credits', () => {
    expect(
      locked(
        'quadratic_vote',
        ['a', 'b'],
        [
          ['1', { a: 9 }],
          ['2', { a: 4 }],
        ],
        3,
      ),
    ).toBe(true);
    expect(locked('quadratic_vote', ['a', 'b'], [['1', { a: 9 }]], 2)).toBe(false);
  });

  it('agreement locks only on complete, unanimous turnout', () => {
    const agreement = { agreement: true };
    expect(
      locked(
        'simple_majority',
        ['x', 'y'],
        [
          ['1', 'x'],
          ['2', 'x'],
        ],
        2,
        agreement,
      ),
    ).toBe(true);
    expect(
      locked(
        'supermajority',
        ['x', 'y'],
        [
          ['1', 'x'],
          ['2', 'y'],
        ],
        2,
        agreement,
      ),
    ).toBe(false);
    expect(
      locked(
        'simple_majority',
        ['x', 'y'],
        [
          ['1', 'x'],
          ['2', 'x'],
        ],
        3,
        agreement,
      ),
    ).toBe(false);
  });

  it('runs the mechanism itself when no output is given', () => {
    const input = engineInputFor({
      kind: 'simple_majority',
      options: ['a', 'b'],
      ballots: [
        ['1', 'a'],
        ['2', 'a'],
        ['3', 'a'],
      ],
      eligibleVoters: 5,
    });
    expect(isLocked('simple_majority', false, input)).toBe(true);
  });
});
