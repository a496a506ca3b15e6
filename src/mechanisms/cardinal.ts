/**
 * The run shared by the cardinal families, score and quadratic (docs/mechanisms.md): clean the ballots, check
 * quorum, sum per-option totals, and let the top total win above a floor, ties by the tie rule.
 * Each family supplies how to read its ballots, how to sum them, its floor and its trace field.
 */
import { leaders, rankByScore, toRecord } from './ordering.js';
import {
  type BallotReader,
  type CleanBallot,
  type CommonParameters,
  cleanVotes,
  isQuorumMet,
  readEligibleVoters,
  readParticipatingVoters,
  readSeed,
  reasonField,
  traceParameters,
} from './shared.js';
import { resolveTopTie } from './tie-break.js';
import { type EngineInput, type EngineOutput, NO_QUORUM, type Verdict } from './types.js';

export interface CardinalFamily<P extends CommonParameters, B> {
  readParameters(parameters: unknown): P;
  readBallot(params: P): BallotReader<B>;
  tally(ballots: readonly CleanBallot<B>[], options: readonly string[]): ReadonlyMap<string, number>;
  /** The top total must exceed this to pass (docs/mechanisms.md). */
  floor(params: P, ballots: readonly CleanBallot<B>[]): number;
  /** The family's own trace field, from the clean ballots (empty when quorum failed). */
  traceField(ballots: readonly CleanBallot<B>[], quorumMet: boolean): Record<string, unknown>;
}

function decide(
  options: readonly string[],
  tieBreak: string,
  scores: ReadonlyMap<string, number>,
  floor: number,
  seed: string,
): Verdict {
  const { top, ties } = leaders(rankByScore(options, scores), scores);
  if (top <= floor) return { outcome: 'no_pass', winner: null };
  return resolveTopTie(
    ties,
    tieBreak as CommonParameters['tieBreak'],
    options,
    seed,
    (winner, size) => `${tieBreak}: chose '${winner}' from ${size}-way tie`,
  );
}

export function runCardinal<P extends CommonParameters, B>(
  family: CardinalFamily<P, B>,
  input: EngineInput,
): EngineOutput {
  const params = family.readParameters(input.parameters);
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const cleaned = cleanVotes(input.votes, family.readBallot(params));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const scores = quorumMet ? family.tally(cleaned.ballots, params.options) : new Map<string, number>();
  const verdict = quorumMet
    ? decide(params.options, params.tieBreak, scores, family.floor(params, cleaned.ballots), seed)
    : NO_QUORUM;
  return {
    outcome: verdict.outcome,
    winner: verdict.winner,
    per_option_score: toRecord(params.options, (option) => scores.get(option) ?? 0),
    cast_votes: castVotes,
    eligible_voters: eligibleVoters,
    quorum_met: quorumMet,
    trace: {
      parameters: traceParameters(params.raw),
      invalid_votes: cleaned.invalidVotes,
      duplicate_voter_ids: cleaned.duplicateVoterIds,
      ...family.traceField(cleaned.ballots, quorumMet),
      ...reasonField(verdict),
    },
  };
}
