/** Webhook attempts (docs/agents.md, The REST loop): eight in all, each delay measured from the previous failure. */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n+1 after attempt n (1-based) failed. */
const DELAYS_AFTER_FAILURE = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

export const MAX_ATTEMPTS = DELAYS_AFTER_FAILURE.length + 1;

/** Consecutive exhausted events after which a subscription is disabled. */
export const DISABLE_AFTER_EXHAUSTED = 3;

/** When to try again after `attemptsMade` attempts, the last failing at `failedAt`; null when exhausted. */
export function nextAttemptAt(attemptsMade: number, failedAt: number): number | null {
  const delay = DELAYS_AFTER_FAILURE[attemptsMade - 1];
  return delay === undefined ? null : failedAt + delay;
}
