/** Quadratic vote (04 §7.2): each option counts the square root of the credits spent on it. */
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

export interface QuadraticParameters extends CommonParameters {
  creditsPerVoter: number;
}

const MAX_CREDITS_PER_VOTER = 1000;

export function readQuadraticParameters(parameters: unknown): QuadraticParameters {
  const common = readCommonParameters(parameters);
  const credits = common.raw.credits_per_voter;
  if (!Number.isInteger(credits) || (credits as number) < 1 || (credits as number) > MAX_CREDITS_PER_VOTER) {
    throw badParameter('credits_per_voter', `an integer in [1, ${MAX_CREDITS_PER_VOTER}]`);
  }
  return { ...common, creditsPerVoter: credits as number };
}

interface Allocation {
  /** Floored credits per option, in slate order. */
  credits: number[];
  total: number;
}

function readAllocation(vote: Vote, params: QuadraticParameters): { weight: number; ballot: Allocation } | null {
  const weight = readPositiveWeight(vote);
  if (weight === null || !isRecord(vote.allocation)) return null;
  const allocation = vote.allocation;
  const raw = params.options.map((option) => ownValueOr(allocation, option, 0));
  if (!raw.every((value) => isFiniteNumber(value) && value >= 0)) return null;
  const credits = (raw as number[]).map(Math.floor);
  const total = credits.reduce((sum, value) => sum + value, 0);
  if (total === 0 || total > params.creditsPerVoter) return null;
  return { weight, ballot: { credits, total } };
}

/** Square roots weighted and accumulated in ballot order (the order matters for floating point). */
function tally(ballots: readonly CleanBallot<Allocation>[], options: readonly string[]): Map<string, number> {
  const sums = options.map(() => 0);
  for (const { weight, ballot } of ballots) {
    ballot.credits.forEach((credits, i) => {
      sums[i] = (sums[i] ?? 0) + Math.sqrt(credits) * weight;
    });
  }
  return new Map(options.map((option, i) => [option, sums[i] ?? 0]));
}

function decide(params: QuadraticParameters, scores: ReadonlyMap<string, number>, seed: string): Verdict {
  const { top, ties } = leaders(rankByScore(params.options, scores), scores);
  if (top <= 0) return { outcome: 'no_pass', winner: null };
  return resolveTopTie(
    ties,
    params.tieBreak,
    params.options,
    seed,
    (winner, size) => `${params.tieBreak}: chose '${winner}' from ${size}-way tie`,
  );
}

export function runQuadratic(input: EngineInput): EngineOutput {
  const params = readQuadraticParameters(input.parameters);
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const cleaned = cleanVotes(input.votes, (vote) => readAllocation(vote, params));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const scores = quorumMet ? tally(cleaned.ballots, params.options) : new Map<string, number>();
  const verdict = quorumMet ? decide(params, scores, seed) : NO_QUORUM;
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
      spent_credits_by_voter: Object.fromEntries(cleaned.ballots.map(({ voterId, ballot }) => [voterId, ballot.total])),
      ...reasonField(verdict),
    },
  };
}
