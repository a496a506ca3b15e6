/**
 * Answers handed to many callers at once (the long-polls one commit wakes, engagement/long-poll.ts):
 * frozen, so no caller's path can change what another receives, and serialized once for the REST
 * transport instead of once per caller (http/routes.ts).
 */
const serialized = new WeakMap<object, Buffer>();

/** Freezes the answer throughout and marks it shared; returns it. */
export function shareAnswer<T extends Record<string, unknown>>(answer: T): T {
  deepFreeze(answer);
  serialized.set(answer, Buffer.from(JSON.stringify(answer)));
  return answer;
}

/** The JSON bytes of a shared answer, or undefined for any other value. */
export function sharedJson(answer: unknown): Buffer | undefined {
  return typeof answer === 'object' && answer !== null ? serialized.get(answer) : undefined;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}
