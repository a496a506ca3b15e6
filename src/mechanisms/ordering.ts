/**
 * JavaScript property order and the stable descending sort that find leaders and ties (docs/mechanisms.md).
 * Tallies live in Maps internally; this module reproduces the order a plain object would give them,
 * because that order is what the seeded tie-break hashes and what `per_option_score` shows.
 */

const MAX_ARRAY_INDEX = 4_294_967_294;
const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** True for keys a JavaScript object enumerates first, in ascending numeric order. */
export function isArrayIndexKey(key: string): boolean {
  return CANONICAL_INDEX.test(key) && Number(key) <= MAX_ARRAY_INDEX;
}

/** The enumeration order of an object built by inserting `keys` in the given order. */
export function jsKeyOrder(keys: readonly string[]): string[] {
  const indexKeys = keys.filter(isArrayIndexKey).sort((a, b) => Number(a) - Number(b));
  const otherKeys = keys.filter((key) => !isArrayIndexKey(key));
  return [...indexKeys, ...otherKeys];
}

/** A plain object over `keys` (inserted in that order), safe for texts such as "__proto__". */
export function toRecord<V>(keys: readonly string[], valueFor: (key: string) => V): Record<string, V> {
  return Object.fromEntries(jsKeyOrder(keys).map((key) => [key, valueFor(key)]));
}

export function scoreOf(scores: ReadonlyMap<string, number>, key: string): number {
  return scores.get(key) ?? 0;
}

/** `keys` in JavaScript key order, then stably sorted by descending score. */
export function rankByScore(keys: readonly string[], scores: ReadonlyMap<string, number>): string[] {
  return jsKeyOrder(keys).sort((a, b) => compareDescending(scoreOf(scores, a), scoreOf(scores, b)));
}

function compareDescending(a: number, b: number): number {
  if (a > b) return -1;
  if (a < b) return 1;
  return 0;
}

/** The highest score of a ranked list and every key that reaches it, in ranked order. */
export function leaders(
  ranked: readonly string[],
  scores: ReadonlyMap<string, number>,
): { top: number; ties: string[] } {
  const first = ranked[0];
  if (first === undefined) return { top: 0, ties: [] };
  const top = scoreOf(scores, first);
  return { top, ties: ranked.filter((key) => scoreOf(scores, key) === top) };
}
