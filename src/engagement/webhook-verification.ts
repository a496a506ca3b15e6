/**
 * Webhook consent (docs/agents.md, Webhooks): what a receiver's answer to an attempt means.
 *
 * Before any room event goes to a new subscription, one verification delivery does: a delivery like
 * any other (the same POST, headers and signature), whose event carries nothing of the room. A receiver
 * written to the protocol verifies the signature and answers 2xx, as it does to every delivery: that
 * 2xx is its consent, and the room's events since the registration follow. A redirect or a 4xx is a
 * refusal, and so is no answer within the delivery timeout: the subscription is disabled. A receiver
 * that is down (a connection error) or failing (a 5xx) is tried again a few times first.
 *
 * The event: type `vendor:conclave:webhook.verification` (the vendor namespace, so it can never be
 * taken for a room event), seq 0 (never a room event's: room seqs start at 1, so a receiver that orders
 * or stores by seq overwrites nothing), its id the subscription's id (the Webhook-Id, stable across
 * its attempts), occurred_at the registration time, decision_id null, data `{webhook_id}`.
 */
import type { AttemptResult } from './webhook-client.js';
import type { DeliveryOutcome, WebhookRecord } from '../store/engagement-port.js';
import { DISABLE_AFTER_EXHAUSTED, nextAttemptAt } from './retry-schedule.js';

export const VERIFICATION_EVENT_TYPE = 'vendor:conclave:webhook.verification';

/** Attempts of a verification delivery (connection errors and 5xx answers only): at once, 5 s, 5 min. */
export const VERIFICATION_ATTEMPTS = 3;

/** Refusals in a row (3xx, or 4xx but 404, 408, 410 and 429) after which a subscription is disabled. */
export const DISABLE_AFTER_REFUSALS = 3;

/** The verification delivery's event id: the subscription's own id. */
export function isVerification(hook: WebhookRecord, eventId: string): boolean {
  return eventId === hook.id;
}

/** The verification delivery's body: `{slug, event}`, as every delivery, with nothing of the room. */
export function verificationBody(hook: WebhookRecord): string {
  return JSON.stringify({
    slug: hook.slug,
    event: {
      id: hook.id,
      seq: 0,
      event_type: VERIFICATION_EVENT_TYPE,
      occurred_at: new Date(hook.created_at).toISOString(),
      decision_id: null,
      data: { webhook_id: hook.id },
    },
  });
}

/** An answer that says no: a redirect (never followed) or a 4xx other than 408 and 429. */
function refusal(status: number | null): boolean {
  if (status === null) return false;
  if (status >= 300 && status < 400) return true;
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/**
 * What an attempt's result means for the delivery and its subscription. `attemptsMade` counts this
 * attempt; `at` is when it ended.
 */
export function judgeAttempt(
  result: AttemptResult,
  verification: boolean,
  attemptsMade: number,
  at: number,
): DeliveryOutcome {
  if (result.ok) return verification ? { kind: 'verified', at } : { kind: 'delivered', at };
  if (verification) {
    if (refusal(result.status)) return { kind: 'refused', at, disableAfter: 1, reason: 'verification_refused' };
    const retryAt = result.timedOut || attemptsMade >= VERIFICATION_ATTEMPTS ? null : nextAttemptAt(attemptsMade, at);
    if (retryAt === null) return { kind: 'exhausted', at, disableAfter: 1, reason: 'verification_unanswered' };
    return { kind: 'retry', at: retryAt };
  }
  if (result.status === 404 || result.status === 410) return { kind: 'refused', at, disableAfter: 1, reason: 'gone' };
  if (refusal(result.status)) {
    return { kind: 'refused', at, disableAfter: DISABLE_AFTER_REFUSALS, reason: 'refused' };
  }
  const retryAt = nextAttemptAt(attemptsMade, at);
  if (retryAt === null) return { kind: 'exhausted', at, disableAfter: DISABLE_AFTER_EXHAUSTED, reason: 'exhausted' };
  return { kind: 'retry', at: retryAt };
}
