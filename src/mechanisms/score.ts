/** Score vote (docs/mechanisms.md): every ballot scores every option; the highest weighted total wins. */
import { type CardinalFamily, runCardinal } from './cardinal.js';
import {
  badParameter,
  type CleanBallot,
  type CommonParameters,
  isFiniteNumber,
  isRecord,
  ownValueOr,
  readCommonParameters,
  readPositiveWeight,
  type Vote,
} from './shared.js';
import type { EngineInput, EngineOutput } from './types.js';

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

const totalWeight = (ballots: readonly CleanBallot<number[]>[]) => ballots.reduce((sum, { weight }) => sum + weight, 0);

const SCORE: CardinalFamily<ScoreParameters, number[]> = {
  readParameters: readScoreParameters,
  readBallot: (params) => (vote) => readScoreBallot(vote, params),
  tally,
  floor: (params, ballots) => params.minScore * totalWeight(ballots),
  traceField: (ballots, quorumMet) => ({ total_weight: quorumMet ? totalWeight(ballots) : 0 }),
};

export function runScore(input: EngineInput): EngineOutput {
  return runCardinal(SCORE, input);
}
