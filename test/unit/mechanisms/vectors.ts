/** The protocol's mechanism vectors (test/vectors) for table-driven tests. */
import type { EngineFamily, EngineInput } from '../../../src/mechanisms/index.js';

export { loadVector } from '../../vectors/load.js';

/** Engine choice as the vectors define it: ballot_mode → generic, else the id prefix. */
export function familyOf(id: string, input: EngineInput): EngineFamily {
  if (input.parameters.ballot_mode !== undefined) return 'generic';
  const prefixes: [string, EngineFamily][] = [
    ['irv_', 'instant_runoff'],
    ['pairwise_', 'schulze'],
    ['score_', 'score'],
    ['quadratic_', 'quadratic'],
  ];
  const match = prefixes.find(([prefix]) => id.startsWith(prefix));
  if (match === undefined) throw new Error(`no engine for vector ${id}`);
  return match[1];
}
