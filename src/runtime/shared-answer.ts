/**
 * Answers handed to many callers at once (the long-polls one commit wakes, engagement/long-poll.ts):
 * frozen, so no caller's path can change what another receives, and serialized once for the REST
 * transport instead of once per caller (http/routes.ts).
 */

/** A shared answer's JSON bytes, and their length as the Content-Length header's value. */
export interface SharedJson {
  readonly bytes: Buffer;
  readonly length: string;
}

/** Shared answers, with their JSON once a REST caller has asked for it (MCP serializes its own). */
const serialized = new WeakMap<object, SharedJson | null>();

/** Freezes the answer throughout and marks it shared; returns it. */
export function shareAnswer<T extends Record<string, unknown>>(answer: T): T {
  deepFreeze(answer);
  serialized.set(answer, null);
  return answer;
}

/** The JSON of a shared answer (serialized on the first call), or undefined for any other value. */
export function sharedJson(answer: unknown): SharedJson | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const known = serialized.get(answer);
  if (known !== null) return known;
  const bytes = Buffer.from(JSON.stringify(answer));
  const json = { bytes, length: String(bytes.length) };
  serialized.set(answer, json);
  return json;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
