/** Quadratic vote (docs/mechanisms.md): each option counts the square root of the credits spent on it. */
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

const QUADRATIC: CardinalFamily<QuadraticParameters, Allocation> = {
  readParameters: readQuadraticParameters,
  readBallot: (params) => (vote) => readAllocation(vote, params),
  tally,
  floor: () => 0,
  traceField: (ballots) => ({
    spent_credits_by_voter: Object.fromEntries(ballots.map(({ voterId, ballot }) => [voterId, ballot.total])),
  }),
};

export function runQuadratic(input: EngineInput): EngineOutput {
  return runCardinal(QUADRATIC, input);
}
