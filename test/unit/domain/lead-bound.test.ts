/**
 * singleChoiceLeadBound keeps each decision's tallies between calls and updates them from the
 * difference between ballot lists. Driven through a sequence of edits on one decision (ballots
 * inserted mid-list, replaced, removed, one agent seated twice, stray options, voters leaving the
 * electorate), every answer must equal the bound computed afresh, and must bound the real count.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { singleChoiceLeadBound } from '../../../src/domain/lead-bound.js';
import type { BallotRecord } from '../../../src/domain/types.js';
import { engineParameters, engineVote, runMechanism } from '../../../src/mechanisms/index.js';

const OPTIONS = ['alpha', 'beta', 'gamma'];

const edit = fc.record({
  kind: fc.constantFrom('insert', 'insert', 'insert', 'replace', 'remove', 'roster'),
  at: fc.nat(40),
  voter: fc.nat(9),
  sharedAgent: fc.boolean(),
  option: fc.constantFrom('alpha', 'beta', 'gamma', 'delta'),
});

/** The real count's lead of its leader over every rival (or the empty score). */
function countedLead(ballots: BallotRecord[], options: string[], electorate: string[]): number {
  const votes = ballots
    .filter((b) => electorate.includes(b.participantId))
    .map((b) => engineVote('plurality', b.agentId, b.ballot));
  const voters = new Set(votes.map((v) => v.voter_id)).size;
  const output = runMechanism('plurality', {
    parameters: engineParameters('plurality', { options, quorumFraction: 0, agreement: false }),
    // One agent seated twice is one voter to the engine.
    eligible_voters: Math.max(electorate.length, voters),
    votes,
    participating_voters: voters,
    deterministic_seed: 'd',
  });
  const scores = options.map((o) => output.per_option_score[o] ?? 0);
  const top = Math.max(...scores);
  const rivals = scores.filter((_, i) => i !== scores.indexOf(top));
  return top - (rivals.length > 0 ? Math.max(...rivals) : 0);
}

describe('singleChoiceLeadBound', () => {
  it('answers as a fresh count of the same ballots would, through every kind of edit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(edit, { maxLength: 40 }), (slate, edits) => {
        const options = OPTIONS.slice(0, slate);
        const everyone = Array.from({ length: 10 }, (_, i) => `p${i}`);
        let electorate = everyone.slice(0, 8);
        let ballots: BallotRecord[] = [];
        for (const [step, e] of edits.entries()) {
          const next = [...ballots];
          const ballot: BallotRecord = {
            participantId: `p${e.voter}`,
            agentId: e.sharedAgent ? 'agent:shared' : `participant:p${e.voter}`,
            mandateRef: null,
            ballot: e.option,
            castAt: step,
            rationale: null,
          };
          if (e.kind === 'insert') next.splice(e.at % (next.length + 1), 0, ballot);
          else if (e.kind === 'replace' && next.length > 0) next[e.at % next.length] = ballot;
          else if (e.kind === 'remove' && next.length > 0) next.splice(e.at % next.length, 1);
          else if (e.kind === 'roster') electorate = everyone.filter((id) => id !== `p${e.voter}`);
          ballots = next;
          const kept = singleChoiceLeadBound(ballots, options, electorate);
          const fresh = singleChoiceLeadBound([...ballots], [...options], [...electorate]);
          expect(kept).toBe(fresh);
          expect(kept).toBeGreaterThanOrEqual(countedLead(ballots, options, electorate));
        }
      }),
      { numRuns: 3000 },
    );
  });
});
