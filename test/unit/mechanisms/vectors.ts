/** Loads the shared protocol vectors (shared/vectors, beside the repository) for table-driven tests. */
import { readFileSync } from 'node:fs';
import type { EngineFamily, EngineInput } from '../../../src/mechanisms/index.js';

export function loadVector<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../../../../shared/vectors/${name}`, import.meta.url), 'utf8')) as T;
}

/** Engine choice per shared/vectors/README.md: ballot_mode → generic, else the id prefix. */
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
