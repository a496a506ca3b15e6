/**
 * Early-close lock checks (docs/how-decisions-end.md, With early close): is the (outcome, winner) pair invariant under every completion
 * of the outstanding ballots? Conservative: true only when proven. Outstanding ballots weigh 1.
 */
import { engineFamily } from './catalog.js';
import { runMechanism } from './engine.js';
import { meetsThreshold, readGenericParameters } from './generic.js';
import { readQuadraticParameters } from './quadratic.js';
import { readScoreParameters } from './score.js';
import type { EngineInput, EngineOutput, MechanismName } from './types.js';

export function remainingBallots(input: EngineInput, output: EngineOutput): number {
  return input.eligible_voters - (input.participating_voters ?? output.cast_votes);
}

export function isLocked(
  mechanism: MechanismName,
  agreement: boolean,
  input: EngineInput,
  output: EngineOutput = runMechanism(mechanism, input),
): boolean {
  const remaining = remainingBallots(input, output);
  // A split with complete turnout is never a determination for an agreement decision.
  if (agreement) return remaining <= 0 && output.outcome === 'pass';
  if (remaining <= 0) return true;
  switch (engineFamily(mechanism)) {
    case 'generic':
      return genericLock(input, output, remaining);
    case 'score':
      return scoreLock(input, output, remaining);
    case 'quadratic':
      return quadraticLock(input, output, remaining);
    case 'instant_runoff':
    case 'schulze':
      // Ranked mechanisms have no partial-turnout proof: they wait for every ballot or the window end.
      return false;
  }
}

function genericLock(input: EngineInput, output: EngineOutput, remaining: number): boolean {
  const { winner, outcome } = output;
  if (winner === null || (outcome !== 'pass' && outcome !== 'plurality_pass')) return false;
  const winnerScore = scoreOf(output, winner);
  if (outcome === 'pass') {
    const params = readGenericParameters(input.parameters);
    if (!meetsThreshold(winnerScore / (output.cast_votes + remaining), params)) return false;
  }
  // An option nobody has proposed yet could still collect every remaining ballot.
  return rivalsTrailBy(output, winner, remaining) && winnerScore > remaining;
}

function scoreLock(input: EngineInput, output: EngineOutput, remaining: number): boolean {
  const { minScore, maxScore } = readScoreParameters(input.parameters);
  return decidedWinnerLeadsBy(output, remaining * (maxScore - minScore));
}

function quadraticLock(input: EngineInput, output: EngineOutput, remaining: number): boolean {
  const { creditsPerVoter } = readQuadraticParameters(input.parameters);
  return decidedWinnerLeadsBy(output, remaining * Math.sqrt(creditsPerVoter));
}

function decidedWinnerLeadsBy(output: EngineOutput, margin: number): boolean {
  const { winner } = output;
  return output.outcome === 'pass' && winner !== null && output.quorum_met && rivalsTrailBy(output, winner, margin);
}

function scoreOf(output: EngineOutput, option: string): number {
  return Object.hasOwn(output.per_option_score, option) ? (output.per_option_score[option] ?? 0) : 0;
}

function rivalsTrailBy(output: EngineOutput, winner: string, margin: number): boolean {
  const lead = scoreOf(output, winner);
  return Object.entries(output.per_option_score).every(([option, score]) => option === winner || lead - score > margin);
}
