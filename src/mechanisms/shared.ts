/**
 * Conventions every engine shares (docs/mechanisms.md): parameter validation, ballot cleaning with duplicate
 * voters, quorum, and the trace fields common to all families.
 */
import { invalidInput, type ProtocolError } from '../errors.js';
import type { EngineInput, TieBreak, Verdict } from './types.js';

export type Vote = Record<string, unknown>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Own value of `key`, or `fallback` when absent; never reads inherited properties such as "toString". */
export function ownValueOr(record: Record<string, unknown>, key: string, fallback: unknown): unknown {
  return Object.hasOwn(record, key) ? record[key] : fallback;
}

export function badParameter(name: string, expectation: string): ProtocolError {
  return invalidInput(`parameters.${name}`, `Engine parameter ${name} must be ${expectation}.`, 'out_of_range');
}

// ---------------------------------------------------------------------------------------------
// Parameters (docs/mechanisms.md)

export interface CommonParameters {
  /** The parameters object as given, for the trace. */
  raw: Record<string, unknown>;
  options: string[];
  quorum: number;
  tieBreak: TieBreak;
}

const TIE_BREAKS: readonly TieBreak[] = ['no_pass', 'first_listed', 'random_seeded'];

export function readCommonParameters(parameters: unknown): CommonParameters {
  if (!isRecord(parameters)) throw badParameter('parameters', 'an object');
  return {
    raw: parameters,
    options: readOptions(parameters.options),
    quorum: readQuorum(parameters.quorum),
    tieBreak: readTieBreak(parameters.tie_break),
  };
}

function readOptions(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((option) => typeof option === 'string')) {
    throw badParameter('options', 'a non-empty array of strings');
  }
  if (new Set(value).size !== value.length) throw badParameter('options', 'free of duplicates');
  return [...value];
}

function readQuorum(value: unknown): number {
  if (!isFiniteNumber(value) || value < 0 || value > 1) throw badParameter('quorum', 'a number in [0, 1]');
  return value;
}

function readTieBreak(value: unknown): TieBreak {
  if (!TIE_BREAKS.includes(value as TieBreak)) throw badParameter('tie_break', `one of ${TIE_BREAKS.join(', ')}`);
  return value as TieBreak;
}

export function readEligibleVoters(input: EngineInput): number {
  const value: unknown = input.eligible_voters;
  if (!Number.isInteger(value) || (value as number) < 0) {
    throw invalidInput('eligible_voters', 'Engine input eligible_voters must be an integer >= 0.', 'out_of_range');
  }
  return value as number;
}

export function readSeed(input: EngineInput): string {
  const value: unknown = input.deterministic_seed;
  if (typeof value !== 'string') {
    throw invalidInput('deterministic_seed', 'Engine input deterministic_seed must be a string.', 'wrong_type');
  }
  return value;
}

/** `participating_voters` after cleaning: defaults to `cast_votes`, else cast_votes ≤ it ≤ eligible_voters. */
export function readParticipatingVoters(input: EngineInput, castVotes: number, eligibleVoters: number): number {
  const value: unknown = input.participating_voters;
  if (value === undefined) return castVotes;
  if (!Number.isInteger(value) || (value as number) < castVotes || (value as number) > eligibleVoters) {
    throw invalidInput(
      'participating_voters',
      `Engine input participating_voters must be an integer between cast_votes (${castVotes}) and eligible_voters (${eligibleVoters}).`,
      'out_of_range',
    );
  }
  return value as number;
}

// ---------------------------------------------------------------------------------------------
// Quorum (docs/mechanisms.md)

export function isQuorumMet(eligibleVoters: number, participatingVoters: number, quorum: number): boolean {
  return eligibleVoters > 0 && participatingVoters / eligibleVoters >= quorum;
}

// ---------------------------------------------------------------------------------------------
// Ballot cleaning and duplicate voters (docs/mechanisms.md)

export interface CleanBallot<B> {
  voterId: string;
  weight: number;
  ballot: B;
}

export interface CleanedVotes<B> {
  ballots: CleanBallot<B>[];
  invalidVotes: number;
  duplicateVoterIds: string[];
}

/** Reads one vote's ballot and weight, or returns null when the vote is invalid for the family. */
export type BallotReader<B> = (vote: Vote) => { weight: number; ballot: B } | null;

/**
 * A repeated voter replaces its earlier clean ballot, even when the repeat is itself invalid.
 * A vote without a string `voter_id` cannot be matched against others and counts as invalid.
 */
export function cleanVotes<B>(votes: unknown, readBallot: BallotReader<B>): CleanedVotes<B> {
  if (!Array.isArray(votes)) throw invalidInput('votes', 'Engine input votes must be an array.', 'wrong_type');
  const ballots: CleanBallot<B>[] = [];
  const seen = new Set<string>();
  const duplicateVoterIds: string[] = [];
  let invalidVotes = 0;
  for (const vote of votes) {
    if (!isRecord(vote) || typeof vote.voter_id !== 'string') {
      invalidVotes += 1;
      continue;
    }
    const voterId = vote.voter_id;
    if (seen.has(voterId)) {
      duplicateVoterIds.push(voterId);
      const earlier = ballots.findIndex((ballot) => ballot.voterId === voterId);
      if (earlier >= 0) ballots.splice(earlier, 1);
    }
    seen.add(voterId);
    const read = readBallot(vote);
    if (read === null) invalidVotes += 1;
    else ballots.push({ voterId, ...read });
  }
  return { ballots, invalidVotes, duplicateVoterIds };
}

/** Weight of a vote: absent means 1; anything other than a finite number is invalid (null). */
export function readWeight(vote: Vote): number | null {
  if (vote.weight === undefined) return 1;
  return isFiniteNumber(vote.weight) ? vote.weight : null;
}

/** Weight for the families that require it to be finite and > 0. */
export function readPositiveWeight(vote: Vote): number | null {
  const weight = readWeight(vote);
  return weight !== null && weight > 0 ? weight : null;
}

/**
 * Ranked ballot (instant runoff and Schulze): entries not in `options` are dropped, repeats keep
 * their first occurrence, and an empty result is invalid.
 */
export function readRankedBallot(
  vote: Vote,
  options: ReadonlySet<string>,
): { weight: number; ballot: string[] } | null {
  const weight = readPositiveWeight(vote);
  if (weight === null || !Array.isArray(vote.ranking)) return null;
  const ranking: string[] = [];
  for (const entry of vote.ranking) {
    if (typeof entry === 'string' && options.has(entry) && !ranking.includes(entry)) ranking.push(entry);
  }
  return ranking.length > 0 ? { weight, ballot: ranking } : null;
}

// ---------------------------------------------------------------------------------------------
// Trace

/** Copy of the parameters for the trace, so the output never aliases the caller's input. */
export function traceParameters(parameters: Record<string, unknown>): Record<string, unknown> {
  return structuredClone(parameters);
}

/** `tie_resolution_reason` is present only when a tie rule decided something. */
export function reasonField(verdict: Verdict): { tie_resolution_reason?: string } {
  return verdict.reason === undefined ? {} : { tie_resolution_reason: verdict.reason };
}
