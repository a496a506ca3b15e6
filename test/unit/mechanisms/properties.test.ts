import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CanonicalBallot,
  type EngineInput,
  type MechanismName,
  replayReceipt,
  runMechanism,
  WIRED_MECHANISMS,
} from '../../../src/mechanisms/index.js';
import { type DecisionSetup, engineInputFor, receiptPayload } from './receipt-fixture.js';

// Option texts include integer-like ones so that JavaScript key order (04 §3.5) is always in play.
const OPTION_POOL = ['alpha', 'beta', '10', '2', '0', 'Nd5', 'nd5', '__proto__'];

const optionsArb = (min = 2, max = 5) =>
  fc.uniqueArray(fc.constantFrom(...OPTION_POOL), { minLength: min, maxLength: max });

/** A map ballot over a non-empty subset of the options, values from `values`, accepted by `valid`. */
function mapBallotArb(options: string[], values: fc.Arbitrary<number>, valid: (values: number[]) => boolean) {
  return fc.shuffledSubarray(options, { minLength: 1 }).chain((keys) =>
    fc
      .array(values, { minLength: keys.length, maxLength: keys.length })
      .filter(valid)
      .map((picked) => Object.fromEntries(keys.map((key, i) => [key, picked[i] ?? 0]))),
  );
}

/**
 * Canonical ballots the service would accept. Score values are integers and quadratic credits are
 * perfect squares, so every sum is exact and independent of ballot order.
 */
function ballotArb(kind: MechanismName, options: string[]): fc.Arbitrary<CanonicalBallot> {
  switch (kind) {
    case 'approval':
      return fc.uniqueArray(fc.constantFrom(...options), { minLength: 1 });
    case 'ranked_choice':
    case 'ranked_pairwise':
      return fc.shuffledSubarray(options, { minLength: 1 });
    case 'score_vote':
      return mapBallotArb(options, fc.integer({ min: 0, max: 5 }), (v) => v.some((x) => x > 0));
    case 'quadratic_vote':
      return mapBallotArb(options, fc.constantFrom(0, 1, 4, 9), (v) => {
        const total = v.reduce((a, b) => a + b, 0);
        return total >= 1 && total <= 9;
      });
    default:
      return fc.constantFrom(...options);
  }
}

const majorityFamily = new Set<MechanismName>(['simple_majority', 'supermajority']);

/** A whole decision: mechanism, slate, ballots, abstentions, electorate and quorum. */
function decisionArb(kinds: readonly MechanismName[] = WIRED_MECHANISMS): fc.Arbitrary<DecisionSetup> {
  return fc
    .record({
      kind: fc.constantFrom(...kinds),
      options: optionsArb(),
      agreementCoin: fc.boolean(),
      decisionId: fc.uuid(),
    })
    .chain(({ kind, options, agreementCoin, decisionId }) => {
      const agreement = agreementCoin && majorityFamily.has(kind);
      return fc
        .record({
          ballots: fc.array(ballotArb(kind, options), { maxLength: 8 }),
          abstentions: fc.integer({ min: 0, max: agreement ? 0 : 2 }),
          absent: fc.integer({ min: 0, max: 3 }),
          quorum: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
        })
        .map(({ ballots, abstentions, absent, quorum }) => {
          const responses = ballots.length + abstentions;
          const eligibleVoters = Math.max(responses + absent, quorum ?? 0);
          return {
            kind,
            options,
            agreement,
            decisionId,
            ballots: ballots.map((ballot, i): [string, CanonicalBallot] => [`participant:${i}`, ballot]),
            abstainers: Array.from({ length: abstentions }, (_, i) => `participant:a${i}`),
            eligibleVoters,
            quorumFraction: quorum === null || eligibleVoters === 0 ? 0 : quorum / eligibleVoters,
          };
        });
    });
}

function permutationOf<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });
}

describe('properties of the mechanisms', () => {
  it('ballot order changes neither outcome, winner nor scores (exact arithmetic)', () => {
    fc.assert(
      fc.property(
        decisionArb().chain((setup) => fc.tuple(fc.constant(setup), permutationOf(engineInputFor(setup).votes))),
        ([setup, shuffledVotes]) => {
          const input = engineInputFor(setup);
          const original = runMechanism(setup.kind, input);
          const shuffled = runMechanism(setup.kind, { ...input, votes: shuffledVotes });
          expect(shuffled.outcome).toBe(original.outcome);
          expect(shuffled.winner).toBe(original.winner);
          expect(shuffled.per_option_score).toEqual(original.per_option_score);
          expect(Object.keys(shuffled.per_option_score)).toEqual(Object.keys(original.per_option_score));
        },
      ),
    );
  });

  it('a Condorcet winner always wins ranked_pairwise', () => {
    fc.assert(
      fc.property(
        optionsArb(3, 5).chain((options) =>
          fc.tuple(
            fc.constant(options),
            fc.array(fc.shuffledSubarray(options, { minLength: 1 }), { minLength: 1, maxLength: 9 }),
          ),
        ),
        fc.uuid(),
        ([options, rankings], seed) => {
          const winner = condorcetWinner(options, rankings);
          fc.pre(winner !== null);
          const output = runMechanism('ranked_pairwise', rankedInput(options, rankings, seed));
          expect(output.outcome).toBe('pass');
          expect(output.winner).toBe(winner);
        },
      ),
    );
  });

  it('an absolute majority of first preferences wins ranked_choice', () => {
    fc.assert(
      fc.property(
        optionsArb(2, 5).chain((options) => {
          const [favourite, ...others] = options as [string, ...string[]];
          const withFavouriteFirst = fc.shuffledSubarray(others).map((rest) => [favourite, ...rest]);
          const withOtherFirst = fc
            .shuffledSubarray(options, { minLength: 1 })
            .filter((ranking) => ranking[0] !== favourite);
          return fc.integer({ min: 1, max: 6 }).chain((majority) =>
            fc.record({
              options: fc.constant(options),
              favourite: fc.constant(favourite),
              rankings: fc
                .tuple(
                  fc.array(withFavouriteFirst, { minLength: majority, maxLength: majority }),
                  fc.array(withOtherFirst, { maxLength: majority - 1 }),
                )
                .chain(([mine, theirs]) => permutationOf([...mine, ...theirs])),
              seed: fc.uuid(),
            }),
          );
        }),
        ({ options, favourite, rankings, seed }) => {
          const output = runMechanism('ranked_choice', rankedInput(options, rankings, seed));
          expect(output.outcome).toBe('pass');
          expect(output.winner).toBe(favourite);
          expect((output.trace.rounds as unknown[]).length).toBe(1);
        },
      ),
    );
  });

  const additive: MechanismName[] = [
    'simple_majority',
    'supermajority',
    'plurality',
    'approval',
    'score_vote',
    'quadratic_vote',
  ];

  it('one more ballot backing only the winner never makes it lose (additive mechanisms)', () => {
    fc.assert(
      fc.property(decisionArb(additive), (setup) => {
        const before = runMechanism(setup.kind, engineInputFor(setup));
        fc.pre(before.winner !== null);
        const winner = before.winner as string;
        const backing = backingBallot(setup.kind, winner);
        const grown: DecisionSetup = {
          ...setup,
          ballots: [...setup.ballots, ['participant:newcomer', backing]],
          eligibleVoters: setup.eligibleVoters + 1,
        };
        const after = runMechanism(setup.kind, engineInputFor(grown));
        expect(after.winner).toBe(winner);
        expect(['pass', 'plurality_pass']).toContain(after.outcome);
      }),
    );
  });

  it('replaying a synthesized receipt matches, and a tampered tally does not', () => {
    fc.assert(
      fc.property(decisionArb(), fc.nat(), (setup, pick) => {
        const payload = receiptPayload(setup);
        expect(replayReceipt(payload).result).toBe('match');
        const tallies = payload.svc.outcome.tallies;
        const keys = Object.keys(tallies);
        const key = keys[pick % keys.length] as string;
        tallies[key] = (tallies[key] ?? 0) + 1;
        expect(replayReceipt(payload).result).toBe('mismatch');
      }),
    );
  });
});

function rankedInput(options: string[], rankings: string[][], seed: string): EngineInput {
  return {
    parameters: { options, quorum: 0, tie_break: 'random_seeded' },
    eligible_voters: rankings.length,
    votes: rankings.map((ranking, i) => ({ voter_id: `v${i}`, ranking })),
    deterministic_seed: seed,
  };
}

/** Independent pairwise count: a ranked option beats an unranked one; two unranked options tie. */
function condorcetWinner(options: string[], rankings: string[][]): string | null {
  const prefers = (a: string, b: string) =>
    rankings.filter((ranking) => {
      const ia = ranking.indexOf(a);
      const ib = ranking.indexOf(b);
      return ia >= 0 && (ib < 0 || ia < ib);
    }).length;
  return options.find((a) => options.every((b) => a === b || prefers(a, b) > prefers(b, a))) ?? null;
}

function backingBallot(kind: MechanismName, winner: string): CanonicalBallot {
  switch (kind) {
    case 'approval':
      return [winner];
    case 'score_vote':
      return { [winner]: 5 };
    case 'quadratic_vote':
      return { [winner]: 9 };
    default:
      return winner;
  }
}
