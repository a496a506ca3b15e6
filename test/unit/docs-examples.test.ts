/**
 * The worked examples of docs/mechanisms.md are data: every ```json conclave-example block is run
 * through the real mechanism code, built the way the service builds a sealed decision's count
 * (src/domain/determination.ts), and must give the result the guide prints.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type CanonicalBallot,
  engineParameters,
  engineVote,
  isMechanismName,
  receiptStatus,
  runMechanism,
  WIRED_MECHANISMS,
} from '../../src/mechanisms/index.js';

const GUIDE = 'docs/mechanisms.md';
const text = readFileSync(GUIDE, 'utf8');

interface Example {
  mechanism: string;
  options: string[];
  ballots: Record<string, CanonicalBallot>;
  abstentions?: number;
  quorum?: number;
  agreement?: boolean;
  decision_id?: string;
  result: {
    status: string;
    winner: string | null;
    tallies: Record<string, number>;
    rounds?: Record<string, unknown>[];
  };
}

const examples: Example[] = [...text.matchAll(/```json conclave-example\n([\s\S]*?)```/g)].map(
  (match) => JSON.parse(match[1]!) as Example,
);

/** Runs an example as the service would seal it: every voter eligible, R = ballots + abstentions. */
function count(example: Example) {
  if (!isMechanismName(example.mechanism)) throw new Error(`unknown mechanism ${example.mechanism}`);
  const mechanism = example.mechanism;
  const voters = Object.entries(example.ballots);
  const responses = voters.length + (example.abstentions ?? 0);
  const eligibleVoters = Math.max(responses, example.quorum ?? 0);
  const output = runMechanism(mechanism, {
    parameters: engineParameters(mechanism, {
      options: example.options,
      quorumFraction: example.quorum ? example.quorum / eligibleVoters : 0,
      agreement: example.agreement === true,
    }),
    eligible_voters: eligibleVoters,
    votes: voters.map(([voter, ballot]) => engineVote(mechanism, `participant:${voter}`, ballot)),
    participating_voters: responses,
    deterministic_seed: example.decision_id ?? '00000000-0000-4000-8000-000000000000',
  });
  return { output, status: receiptStatus(output, responses) };
}

describe(`the worked examples of ${GUIDE}`, () => {
  it('has an example for every mechanism', () => {
    expect(new Set(examples.map((e) => e.mechanism))).toEqual(new Set(WIRED_MECHANISMS));
  });

  it.each(examples.map((e, i) => [`${i + 1}: ${e.mechanism}${e.agreement ? ' (agreement)' : ''}`, e] as const))(
    'example %s gives the printed result',
    (_name, example) => {
      const { output, status } = count(example);
      expect(status).toBe(example.result.status);
      expect(output.winner).toBe(example.result.winner);
      expect(output.per_option_score).toEqual(example.result.tallies);
      if (example.result.rounds) expect(output.trace.rounds).toMatchObject(example.result.rounds);
    },
  );

  it('prints the seeded draw exactly as the plurality example computes it', () => {
    const example = examples.find((e) => e.decision_id)!;
    const digest = createHash('sha256')
      .update(example.decision_id!)
      .update(JSON.stringify({ options: example.options, ties: ['tea', 'coffee'] }))
      .digest();
    const drawn = digest.readUInt32BE(0);
    expect(text).toContain(`\`${digest.subarray(0, 4).toString('hex')}\` = ${drawn}`);
    expect(text).toContain(`${drawn} mod 2 = ${drawn % 2}`);
    expect(['tea', 'coffee'][drawn % 2]).toBe(example.result.winner);
  });
});
