/** Dispatch from a mechanism or engine family to its pure engine function. */
import { invalidInput } from '../errors.js';
import { engineFamily } from './catalog.js';
import { runGeneric } from './generic.js';
import { runInstantRunoff } from './instant-runoff.js';
import { runQuadratic } from './quadratic.js';
import { runSchulze } from './schulze.js';
import { runScore } from './score.js';
import type { EngineFamily, EngineInput, EngineOutput, MechanismName } from './types.js';

const ENGINES: Record<EngineFamily, (input: EngineInput) => EngineOutput> = {
  generic: runGeneric,
  instant_runoff: runInstantRunoff,
  schulze: runSchulze,
  score: runScore,
  quadratic: runQuadratic,
};

export function runEngine(family: EngineFamily, input: EngineInput): EngineOutput {
  if (!Object.hasOwn(ENGINES, family)) {
    throw invalidInput('family', `Unknown engine family ${JSON.stringify(family)}.`, 'out_of_range');
  }
  return ENGINES[family](input);
}

/** Agreement decisions run the generic engine too; their parameters carry the difference. */
export function runMechanism(mechanism: MechanismName, input: EngineInput): EngineOutput {
  return runEngine(engineFamily(mechanism), input);
}
