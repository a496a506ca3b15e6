/**
 * determine() answers without counting when a lock is impossible (see lockImpossible); this checks
 * that shortcut against the full count and lock proof on generated decisions, for every mechanism
 * family it covers and for agreement decisions.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { count, determine } from '../../../src/domain/determination.js';
import type { BallotRecord, DecisionData, DecisionFacts } from '../../../src/domain/types.js';
import { isLocked, type MechanismName } from '../../../src/mechanisms/index.js';

const OPTIONS = ['alpha', 'beta', 'gamma'];
const MECHANISMS: MechanismName[] = [
  'simple_majority',
  'supermajority',
  'plurality',
  'ranked_choice',
  'ranked_pairwise',
];

function ballotFor(mechanism: MechanismName, agreement: boolean, pick: number[]): unknown {
  if (!agreement && (mechanism === 'ranked_choice' || mechanism === 'ranked_pairwise')) {
    return [...new Set(pick.map((i) => OPTIONS[i % OPTIONS.length]!))];
  }
  return OPTIONS[pick[0]! % (agreement ? 2 : OPTIONS.length)];
}

const scenario = fc.record({
  mechanism: fc.constantFrom(...MECHANISMS),
  agreement: fc.boolean(),
  electorate: fc.integer({ min: 1, max: 12 }),
  voters: fc.array(
    fc.record({
      who: fc.integer({ min: 0, max: 13 }),
      pick: fc.array(fc.nat(5), { minLength: 1, maxLength: 3 }),
      abstain: fc.boolean(),
      // An agent seated twice (its two ballots are one voter's, unless two issuers named the subject:
      // then two voters) and a ballot off the slate.
      sharedAgent: fc.option(fc.nat(1), { nil: null }),
      issuer: fc.constantFrom(undefined, 'did:key:zSquatter', 'https://issuer.example'),
      offSlate: fc.boolean(),
    }),
    { maxLength: 14 },
  ),
  quorum: fc.option(fc.integer({ min: 1, max: 14 }), { nil: null }),
  slate: fc.integer({ min: 1, max: 3 }),
});

describe('determine', () => {
  it('agrees with the full count and lock proof whenever it skips counting', () => {
    fc.assert(
      fc.property(scenario, ({ mechanism, agreement: wantsAgreement, electorate, voters, quorum, slate }) => {
        const agreement = wantsAgreement && (mechanism === 'simple_majority' || mechanism === 'supermajority');
        const ids = Array.from({ length: 14 }, (_, i) => `p${i}`);
        const seen = new Set<number>();
        const ballots = [];
        const abstentions = [];
        for (const [i, v] of voters.entries()) {
          const who = v.who % (electorate + 1);
          if (seen.has(who)) continue;
          seen.add(who);
          const participantId = ids[who]!;
          const agentId = v.sharedAgent === null ? `participant:${participantId}` : `agent:${v.sharedAgent}`;
          const agentIss = v.sharedAgent === null ? {} : v.issuer ? { agentIss: v.issuer } : {};
          if (v.abstain && !agreement) {
            abstentions.push({ participantId, agentId, ...agentIss, reason: 'r', declaredAt: i });
          } else {
            ballots.push({
              participantId,
              agentId,
              ...agentIss,
              mandateRef: null,
              ballot: v.offSlate && !agreement ? 'delta' : ballotFor(mechanism, agreement, v.pick),
              castAt: i,
              rationale: null,
            });
          }
        }
        const decision = {
          id: 'd',
          options: agreement ? OPTIONS.slice(0, 2) : OPTIONS.slice(0, slate),
          agreement,
          ballots,
          abstentions,
          eligibleIds: null,
        } as unknown as DecisionData;
        const facts = {
          earlyClose: true,
          mechanism,
          electorate: ids.slice(0, electorate),
          quorum,
          rosterGate: false,
        } as unknown as DecisionFacts;
        const counted = count(decision, facts)!;
        const expected = counted.responses >= 1 && isLocked(mechanism, agreement, counted.input, counted.output);
        expect(determine(decision, facts).determined).toBe(expected);
      }),
      { numRuns: 20000 },
    );
  });
});

describe('count', () => {
  const facts = {
    earlyClose: false,
    mechanism: 'plurality',
    electorate: ['p1', 'p2', 'p3'],
    quorum: null,
    rosterGate: false,
  } as unknown as DecisionFacts;
  const decisionOf = (ballots: Partial<BallotRecord>[]) =>
    ({
      id: 'd',
      options: ['a', 'b'],
      agreement: false,
      ballots: ballots.map((b, i) => ({ mandateRef: null, castAt: i, rationale: null, ...b })),
      abstentions: [],
      eligibleIds: null,
    }) as unknown as DecisionData;

  it("counts one subject's seats of two issuers as two voters (docs/architecture.md, Credentials)", () => {
    const counted = count(
      decisionOf([
        { participantId: 'p1', agentId: 'urn:example:agent:7', agentIss: 'did:key:zSquatter', ballot: 'b' },
        { participantId: 'p2', agentId: 'urn:example:agent:7', agentIss: 'https://issuer.example', ballot: 'a' },
        { participantId: 'p3', agentId: 'participant:p3', ballot: 'a' },
      ]),
      facts,
    )!;
    expect(counted.output.per_option_score).toEqual({ a: 2, b: 1 });
    expect(counted.output.trace.duplicate_voter_ids).toEqual([]);
  });

  it("never lets a mandate ballot named like a token seat's participant:<id> replace that seat's ballot", () => {
    const counted = count(
      decisionOf([
        { participantId: 'p1', agentId: 'participant:p1', ballot: 'a' },
        { participantId: 'p2', agentId: 'participant:p1', agentIss: 'did:key:zForger', ballot: 'b' },
      ]),
      facts,
    )!;
    expect(counted.output.per_option_score).toEqual({ a: 1, b: 1 });
  });
});
