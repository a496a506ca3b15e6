/**
 * What JCS (RFC 8785, docs/receipts.md) can carry, checked at the door: every accepted value may end up in a
 * signed receipt, an event or an idempotency fingerprint, and JCS refuses lone surrogates and
 * non-finite numbers (`1e309` parses to Infinity). Refusing them here, as a body-parsing failure
 * (docs/architecture.md, Errors), keeps a room from accepting a value it could never sign. The walk is iterative
 * and depth-bounded so that hostile nesting is refused before anything recurses over it.
 */
import { invalidInput, type ProtocolError } from '../errors.js';

/** Deeper than any request the protocol defines (config and ballots nest three or four levels). */
export const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type JcsProblem =
  | { path: string; reason: 'lone_surrogate' }
  | { path: string; reason: 'non_finite' }
  | { path: string; reason: 'too_deep' };

/** The first value JCS could not carry, or null. Never throws, never recurses. */
export function jcsProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JcsProblem | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return { path: item.path, reason: 'lone_surrogate' };
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { path: item.path, reason: 'non_finite' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (item.depth >= maxDepth) return { path: item.path, reason: 'too_deep' };
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((member, index) => [String(index), member])
      : Object.entries(v);
    for (const [key, member] of entries) {
      const path = item.path === '' ? key : `${item.path}.${key}`;
      if (LONE_SURROGATE.test(key)) return { path, reason: 'lone_surrogate' };
      stack.push({ value: member, path, depth: item.depth + 1 });
    }
  }
  return null;
}

const EXPLANATION: Record<JcsProblem['reason'], string> = {
  lone_surrogate:
    'contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which signed receipts cannot carry. Send well-formed Unicode text',
  non_finite: 'is a number JSON cannot represent (it overflows to infinity). Send a finite number',
  too_deep: `nests deeper than ${MAX_JSON_DEPTH} levels. Send a flatter value`,
};

/** The input.invalid a transport answers when `jcsProblem` finds something. */
export function unrepresentableInput(
  problem: JcsProblem,
  fieldName: (field: string) => string = (f) => f,
): ProtocolError {
  const field = problem.path === '' ? 'body' : fieldName(problem.path);
  return invalidInput(field, `The field "${field}" ${EXPLANATION[problem.reason]}.`, 'wrong_type');
}

/** Throws input.invalid when `value` holds anything JCS could not carry. */
export function refuseUnrepresentable(value: unknown, fieldName?: (field: string) => string): void {
  const problem = jcsProblem(value);
  if (problem) throw unrepresentableInput(problem, fieldName);
}
