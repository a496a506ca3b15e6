/** Ranked pairwise by the Schulze beatpath method (docs/mechanisms.md). */
import { leaders, rankByScore, toRecord } from './ordering.js';
import {
  type CleanBallot,
  cleanVotes,
  isQuorumMet,
  readCommonParameters,
  readEligibleVoters,
  readParticipatingVoters,
  readRankedBallot,
  readSeed,
  reasonField,
  traceParameters,
} from './shared.js';
import { resolveTopTie } from './tie-break.js';
import { type EngineInput, type EngineOutput, NO_QUORUM, type Verdict } from './types.js';

/** Square matrix indexed by slate position. */
type Matrix = number[][];

function zeroMatrix(size: number): Matrix {
  return Array.from({ length: size }, () => new Array<number>(size).fill(0));
}

function cell(matrix: Matrix, row: number, column: number): number {
  return matrix[row]?.[column] ?? 0;
}

function setCell(matrix: Matrix, row: number, column: number, value: number): void {
  const line = matrix[row];
  if (line !== undefined) line[column] = value;
}

/** d[a][b]: weight of ballots preferring a to b; a ranked option beats an unranked one. */
function pairwisePreferences(ballots: readonly CleanBallot<string[]>[], options: readonly string[]): Matrix {
  const d = zeroMatrix(options.length);
  for (const { weight, ballot } of ballots) {
    const position = options.map((option) => ballot.indexOf(option));
    position.forEach((a, i) => {
      position.forEach((b, j) => {
        const prefers = a >= 0 && (b < 0 || a < b);
        if (i !== j && prefers) setCell(d, i, j, cell(d, i, j) + weight);
      });
    });
  }
  return d;
}

/** p: strongest path strengths, widened in slate order. */
function strongestPaths(d: Matrix): Matrix {
  const size = d.length;
  const p = zeroMatrix(size);
  for (let i = 0; i < size; i += 1) {
    for (let j = 0; j < size; j += 1) {
      if (i !== j && cell(d, i, j) > cell(d, j, i)) setCell(p, i, j, cell(d, i, j));
    }
  }
  for (let i = 0; i < size; i += 1) {
    for (let j = 0; j < size; j += 1) {
      if (j === i) continue;
      for (let k = 0; k < size; k += 1) {
        if (k === i || k === j) continue;
        setCell(p, j, k, Math.max(cell(p, j, k), Math.min(cell(p, j, i), cell(p, i, k))));
      }
    }
  }
  return p;
}

/** +1 for every option a beats by strongest path, −1 for every option that beats a. */
function beatpathScores(p: Matrix, options: readonly string[]): Map<string, number> {
  return new Map(
    options.map((option, a) => {
      let score = 0;
      options.forEach((_, b) => {
        if (a === b) return;
        score += Math.sign(cell(p, a, b) - cell(p, b, a));
      });
      return [option, score];
    }),
  );
}

function matrixRecord(matrix: Matrix, options: readonly string[]): Record<string, Record<string, number>> {
  const index = new Map(options.map((option, i) => [option, i]));
  const at = (option: string): number => index.get(option) ?? -1;
  return toRecord(options, (row) => toRecord(options, (column) => cell(matrix, at(row), at(column))));
}

interface BeatpathCount {
  d: Matrix;
  p: Matrix;
  scores: Map<string, number>;
  tiedOptions: string[];
}

function countBeatpaths(ballots: readonly CleanBallot<string[]>[], options: readonly string[]): BeatpathCount {
  const d = pairwisePreferences(ballots, options);
  const p = strongestPaths(d);
  const scores = beatpathScores(p, options);
  return { d, p, scores, tiedOptions: leaders(rankByScore(options, scores), scores).ties };
}

/** Below quorum every matrix and score is zero and nothing is tied. */
function emptyCount(size: number): BeatpathCount {
  return { d: zeroMatrix(size), p: zeroMatrix(size), scores: new Map(), tiedOptions: [] };
}

export function runSchulze(input: EngineInput): EngineOutput {
  const params = readCommonParameters(input.parameters);
  const { options, tieBreak } = params;
  const eligibleVoters = readEligibleVoters(input);
  const seed = readSeed(input);
  const optionSet = new Set(options);
  const cleaned = cleanVotes(input.votes, (vote) => readRankedBallot(vote, optionSet));
  const castVotes = cleaned.ballots.length;
  const participating = readParticipatingVoters(input, castVotes, eligibleVoters);
  const quorumMet = isQuorumMet(eligibleVoters, participating, params.quorum);
  const count = quorumMet ? countBeatpaths(cleaned.ballots, options) : emptyCount(options.length);
  const verdict: Verdict = quorumMet
    ? resolveTopTie(
        count.tiedOptions,
        tieBreak,
        options,
        seed,
        (winner, size) => `${tieBreak}: chose '${winner}' from ${size}-way top tie`,
      )
    : NO_QUORUM;
  return {
    outcome: verdict.outcome,
    winner: verdict.winner,
    per_option_score: toRecord(options, (option) => count.scores.get(option) ?? 0),
    cast_votes: castVotes,
    eligible_voters: eligibleVoters,
    quorum_met: quorumMet,
    trace: {
      parameters: traceParameters(params.raw),
      invalid_votes: cleaned.invalidVotes,
      duplicate_voter_ids: cleaned.duplicateVoterIds,
      pairwise_preferences: matrixRecord(count.d, options),
      strongest_paths: matrixRecord(count.p, options),
      tied_options: count.tiedOptions,
      ...reasonField(verdict),
    },
  };
}
