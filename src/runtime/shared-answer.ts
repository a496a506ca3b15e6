/**
 * Answers handed to many callers at once (the long-polls one commit wakes, engagement/long-poll.ts):
 * frozen, so no caller's path can change what another receives, and serialized once for the REST
 * transport instead of once per caller (http/routes.ts).
 */
/** Shared answers, with their JSON bytes once a REST caller has asked for them (MCP serializes its own). */
const serialized = new WeakMap<object, Buffer | null>();

/** Freezes the answer throughout and marks it shared; returns it. */
export function shareAnswer<T extends Record<string, unknown>>(answer: T): T {
  deepFreeze(answer);
  serialized.set(answer, null);
  return answer;
}

/** The JSON bytes of a shared answer (serialized on the first call), or undefined for any other value. */
export function sharedJson(answer: unknown): Buffer | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const known = serialized.get(answer);
  if (known !== null) return known;
  const bytes = Buffer.from(JSON.stringify(answer));
  serialized.set(answer, bytes);
  return bytes;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
