/**
 * Misspelt keys are refused, never dropped (docs/agents.md, The REST loop): a misspelt field would
 * otherwise vanish and the act succeed without it. Inside `config` and `settings` every unknown key is
 * refused (the protocol's rule); in an act, a key close to an allowed one (nearestKey) is, while other
 * unknown top-level keys are ignored as the protocol says (operations/input.ts). One refusal serves
 * them all, on REST and MCP alike: input.invalid with reason unknown_keys, the allowed keys, and for
 * each unknown key the nearest allowed one when it is close enough to be a slip.
 */
import { ProtocolError } from '../errors.js';

/** Lower case without separators: display_name, displayName and DISPLAY-NAME compare equal. */
function folded(key: string): string {
  return key.toLowerCase().replace(/[_\-\s]/g, '');
}

/** Edit distance counting an adjacent swap as one edit ("stnace" is one edit from "stance"). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The allowed key an unknown one most likely meant, or undefined when none is close: the same key in
 * another case or separator style, else the fewest edits, at most a third of the key's length (at least one).
 */
export function nearestKey(key: string, allowed: readonly string[]): string | undefined {
  const mine = folded(key);
  const same = allowed.find((candidate) => folded(candidate) === mine);
  if (same !== undefined) return same;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of allowed) {
    const distance = editDistance(mine, folded(candidate));
    if (best === undefined || distance < best.distance) best = { key: candidate, distance };
  }
  const limit = Math.max(1, Math.floor(mine.length / 3));
  return best !== undefined && best.distance <= limit ? best.key : undefined;
}

/**
 * input.invalid for keys outside `allowed`, where `where` says what held them (`config`, `the discuss
 * action (POST /api/rooms/{slug}/discuss)`). `field` is the details.field (the object, or the key itself).
 */
export function unknownKeysError(
  field: string,
  keys: readonly string[],
  allowed: readonly string[],
  where: string,
): ProtocolError {
  const near = keys.map((key) => [key, nearestKey(key, allowed)] as const);
  const named = near.map(([key, guess]) => (guess === undefined ? `"${key}"` : `"${key}" (did you mean "${guess}"?)`));
  const renames = near.flatMap(([key, guess]) => (guess === undefined ? [] : [`"${guess}" instead of "${key}"`]));
  return new ProtocolError({
    code: 'input.invalid',
    message: `Unknown key${keys.length === 1 ? '' : 's'} ${named.join(', ')} in ${where}: refused rather than dropped, so the call never runs without what you meant. Allowed keys: ${allowed.join(', ')}.`,
    ...(renames.length > 0 ? { hint: `Send ${renames.join(' and ')}, then repeat the call.` } : {}),
    details: { field, reason: 'unknown_keys', allowed_keys: allowed },
  });
}
