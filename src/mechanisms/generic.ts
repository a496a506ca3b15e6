/**
 * Generic vote (docs/mechanisms.md): simple majority, supermajority, plurality, approval and agreement decisions
 * are all this one count under different parameters.
 */
import { leaders, rankByScore, toRecord } from './ordering.js';
import {
  badParameter,
  type CleanBallot,
  type CommonParameters,
  cleanVotes,
  isFiniteNumber,
  isQuorumMet,
  readCommonParameters,
  readEligibleVoters,
  readParticipatingVoters,
  readSeed,
  readWeight,
  reasonField,
  traceParameters,
  type Vote,
} from './shared.js';
import { breakTopTie, NO_PASS_TIE_REASON, resolveTopTie } from './tie-break.js';
import type { EngineInput, EngineOutput, Verdict } from './types.js';

export type BallotMode = 'single_choice' | 'approval';

export interface GenericParameters extends CommonParameters {
  ballotMode: BallotMode;
  passThreshold: number;
  /** `pass_threshold_comparison: "strict"`; absent or "inclusive" means ≥. */
  strict: boolean;
  pluralityFallthrough: boolean;
}

export function readGenericParameters(parameters: unknown): GenericParameters {
  const common = readCommonParameters(parameters);
  const { raw } = common;
  return {
    ...common,
    ballotMode: readBallotMode(raw.ballot_mode),
    passThreshold: readPassThreshold(raw.pass_threshold),
    strict: readStrictComparison(raw.pass_threshold_comparison),
    pluralityFallthrough: readFallthrough(raw.plurality_fallthrough),
  };
}

function readBallotMode(value: unknown): BallotMode {
  if (value !== 'single_choice' && value !== 'approval') throw badParameter('ballot_mode', 'single_choice or approval');
  return value;
}

function readPassThreshold(value: unknown): number {
  if (!isFiniteNumber(value) || value <= 0 || value > 1) throw badParameter('pass_threshold', 'a number in (0, 1]');
  return value;
}

function readStrictComparison(value: unknown): boolean {
  if (value === undefined || value === 'inclusive') return false;
  if (value === 'strict') return true;
  throw badParameter('pass_threshold_comparison', 'absent, inclusive or strict');
}

function readFallthrough(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw badParameter('plurality_fallthrough', 'a boolean');
  return value;
}

/** The threshold (docs/mechanisms.md): the share of ballots an option needs, with the configured comparison. */
export function meetsThreshold(share: number, params: Pick<GenericParameters, 'passThreshold' | 'strict'>): boolean {
  return params.strict ? share > params.passThreshold : share >= params.passThreshold;
}

function readGenericBallot(vote: Vote, params: GenericParameters): { weight: number; ballot: string[] } | null {
  const weight = readWeight(vote);
  if (weight === null) return null;
  const choices: unknown[] = Array.isArray(vote.choice) ? vote.choice : [vote.choice];
  if (params.ballotMode === 'single_choice' && choices.length !== 1) return null;
  if (!choices.every((choice) => typeof choice === 'string' && params.options.includes(choice))) return null;
  return { weight, ballot: choices as string[] };
}

/** A ballot with weight ≤ 0 still counts as cast but adds nothing. */
function tally(ballots: readonly CleanBallot<string[]>[], options: readonly string[]): Map<string, number> {
  const scores = new Map(options.map((option) => [option, 0]));
  for (const { weight, ballot } of ballots) {
    if (weight <= 0) continue;
    for (const choice of ballot) scores.set(choice, (scores.get(choice) ?? 0) + weight);
  }
  return scores;
}

interface GenericVerdict extends Verdict {
  thresholdMet: boolean;
}

function decide(
  params: GenericParameters,
  scores: ReadonlyMap<string, number>,
  castVotes: number,
  seed: string,
): GenericVerdict {
  const { top, ties } = leaders(rankByScore(params.options, scores), scores);
  const thresholdMet = castVotes > 0 && meetsThreshold(top / castVotes, params);
  if (thresholdMet) return { ...decideAboveThreshold(params, ties, seed), thresholdMet };
  if (params.pluralityFallthrough && top > 0) {
    return { ...fallThrough(params, ties, top, castVotes, seed), thresholdMet };
  }
  return { outcome: 'no_pass', winner: null, thresholdMet };
}

function decideAboveThreshold(params: GenericParameters, ties: readonly string[], seed: string): Verdict {
  return resolveTopTie(ties, params.tieBreak, params.options, seed, (winner, size) =>
    params.tieBreak === 'first_listed'
      ? `first_listed: chose '${winner}' as earliest tied option`
      : `random_seeded: chose '${winner}' from ${size}-way tie via seed`,
  );
}

function fallThrough(
  params: GenericParameters,
  ties: readonly string[],
  top: number,
  castVotes: number,
  seed: string,
): Verdict {
  const [leader] = ties;
  if (ties.length === 1 && leader !== undefined) {
    return {
      outcome: 'plurality_pass',
      winner: leader,
      reason: `plurality_fallthrough: '${leader}' led with ${top}/${castVotes} (threshold ${params.passThreshold} not met)`,
    };
  }
  const winner = breakTopTie(params.tieBreak, ties, params.options, seed);
  if (winner === null) return { outcome: 'no_pass', winner: null, reason: NO_PASS_TIE_REASON };
  return {
    outcome: 'plurality_pass',
    winner,
    reason: `plurality_fallthrough + ${params.tieBreak}: '${winner}' picked from ${ties.length}-way tie at ${top}/${castVotes}`,
  };
}

export function runGeneric(input: EngineInput): EngineOutput {
  const params = readGenericParameters(input.parameters);
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const cleaned = cleanVotes(input.votes, (vote) => readGenericBallot(vote, params));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const scores = tally(cleaned.ballots, params.options);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const verdict: GenericVerdict = quorumMet
    ? decide(params, scores, castVotes, seed)
    : { outcome: 'no_pass', winner: null, thresholdMet: false };
  return {
    outcome: verdict.outcome,
    winner: verdict.winner,
    per_option_score: toRecord(params.options, (option) => scores.get(option) ?? 0),
    cast_votes: castVotes,
    eligible_voters: eligibleVoters,
    quorum_met: quorumMet,
    threshold_met: verdict.thresholdMet,
    trace: {
      parameters: traceParameters(params.raw),
      invalid_votes: cleaned.invalidVotes,
      duplicate_voter_ids: cleaned.duplicateVoterIds,
      ...reasonField(verdict),
    },
  };
}
