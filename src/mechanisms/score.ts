/** Score vote (04 §7.1): every ballot scores every option; the highest weighted total wins. */
import { leaders, rankByScore, toRecord } from './ordering.js';
import {
  badParameter,
  type CleanBallot,
  type CommonParameters,
  cleanVotes,
  isFiniteNumber,
  isQuorumMet,
  isRecord,
  ownValueOr,
  readCommonParameters,
  readEligibleVoters,
  readParticipatingVoters,
  readPositiveWeight,
  readSeed,
  reasonField,
  traceParameters,
  type Vote,
} from './shared.js';
import { resolveTopTie } from './tie-break.js';
import { type EngineInput, type EngineOutput, NO_QUORUM, type Verdict } from './types.js';

export interface ScoreParameters extends CommonParameters {
  minScore: number;
  maxScore: number;
}

export function readScoreParameters(parameters: unknown): ScoreParameters {
  const common = readCommonParameters(parameters);
  const minScore = common.raw.min_score;
  const maxScore = common.raw.max_score;
  if (!isFiniteNumber(minScore) || minScore < 0) throw badParameter('min_score', 'a finite number >= 0');
  if (!isFiniteNumber(maxScore) || maxScore <= minScore) throw badParameter('max_score', 'a finite number > min_score');
  return { ...common, minScore, maxScore };
}

/** The ballot as one value per option, in slate order; an unscored option takes `min_score`. */
function readScoreBallot(vote: Vote, params: ScoreParameters): { weight: number; ballot: number[] } | null {
  const weight = readPositiveWeight(vote);
  if (weight === null || !isRecord(vote.scores)) return null;
  const scores = vote.scores;
  const values = params.options.map((option) => ownValueOr(scores, option, params.minScore));
  const inRange = (value: unknown): value is number =>
    isFiniteNumber(value) && value >= params.minScore && value <= params.maxScore;
  if (!values.every(inRange)) return null;
  if (!values.some((value) => value > params.minScore)) return null;
  return { weight, ballot: values };
}

/** Weighted sums, accumulated in ballot order. */
function tally(ballots: readonly CleanBallot<number[]>[], options: readonly string[]): Map<string, number> {
  const sums = options.map(() => 0);
  for (const { weight, ballot } of ballots) {
    ballot.forEach((value, i) => {
      sums[i] = (sums[i] ?? 0) + value * weight;
    });
  }
  return new Map(options.map((option, i) => [option, sums[i] ?? 0]));
}

function decide(
  params: ScoreParameters,
  scores: ReadonlyMap<string, number>,
  totalWeight: number,
  seed: string,
): Verdict {
  const { top, ties } = leaders(rankByScore(params.options, scores), scores);
  if (top <= params.minScore * totalWeight) return { outcome: 'no_pass', winner: null };
  return resolveTopTie(
    ties,
    params.tieBreak,
    params.options,
    seed,
    (winner, size) => `${params.tieBreak}: chose '${winner}' from ${size}-way tie`,
  );
}

export function runScore(input: EngineInput): EngineOutput {
  const params = readScoreParameters(input.parameters);
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const cleaned = cleanVotes(input.votes, (vote) => readScoreBallot(vote, params));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const scores = quorumMet ? tally(cleaned.ballots, params.options) : new Map<string, number>();
  const totalWeight = quorumMet ? cleaned.ballots.reduce((sum, { weight }) => sum + weight, 0) : 0;
  const verdict = quorumMet ? decide(params, scores, totalWeight, seed) : NO_QUORUM;
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
      total_weight: totalWeight,
      ...reasonField(verdict),
    },
  };
}
