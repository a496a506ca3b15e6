/** Webhooks and deliveries as the Redis engagement store writes and reads them (redis-engagement.ts). */
import type { DeliveryRecord, DeliveryStatus, DisableReason, WebhookRecord } from './engagement-port.js';

const WEBHOOK_FIELD = /^([^:]+)(?::(cursor|streak|refusals|verified_at|disabled_at|reason))?$/;

/** The parts of a webhook record that change after registration: kept in fields of their own. */
export const MUTABLE_WEBHOOK_FIELDS = [
  'cursor',
  'failure_streak',
  'refusal_streak',
  'verified_at',
  'disabled_at',
  'disabled_reason',
] as const;

/** A record without its mutable parts: the JSON that never changes. */
export function fixedPart(webhook: WebhookRecord): Omit<WebhookRecord, (typeof MUTABLE_WEBHOOK_FIELDS)[number]> {
  const {
    cursor: _cursor,
    failure_streak: _streak,
    refusal_streak: _refusals,
    verified_at: _verified,
    disabled_at: _disabled,
    disabled_reason: _reason,
    ...fixed
  } = webhook;
  return fixed;
}

export function sortedKeys(value: object): [string, unknown][] {
  return Object.entries(value).sort(([a], [b]) => a.localeCompare(b));
}

/** Index entries reordered so the rooms take turns: each room's first, then each room's second, … */
export function takeTurns<T extends { slug: string }>(entries: T[]): T[] {
  const turnOf = new Map<string, number>();
  const numbered = entries.map((entry, index) => {
    const turn = turnOf.get(entry.slug) ?? 0;
    turnOf.set(entry.slug, turn + 1);
    return { entry, turn, index };
  });
  return numbered.sort((a, b) => a.turn - b.turn || a.index - b.index).map((n) => n.entry);
}

export function dueMember(slug: string, webhookId: string, eventId: string): string {
  return `${slug}|${webhookId}|${eventId}`;
}

export function parseDelivery(slug: string, webhookId: string, eventId: string, value: string): DeliveryRecord {
  const [status, attempts, time, seq] = value.split(' ');
  const at = time === '-' || time === undefined ? null : Number(time);
  return {
    slug,
    webhook_id: webhookId,
    event_id: eventId,
    seq: Number(seq),
    status: status as DeliveryStatus,
    attempts: Number(attempts),
    next_attempt_at: status === 'pending' ? at : null,
    settled_at: status === 'pending' ? null : at,
  };
}

export function parseWebhooks(hash: Record<string, string>): WebhookRecord[] {
  const byId = new Map<string, Partial<WebhookRecord>>();
  for (const [field, value] of Object.entries(hash)) {
    const match = WEBHOOK_FIELD.exec(field);
    if (!match) continue;
    const id = match[1]!;
    const entry = byId.get(id) ?? {};
    byId.set(id, entry);
    if (match[2] === 'cursor') entry.cursor = Number(value);
    else if (match[2] === 'streak') entry.failure_streak = Number(value);
    else if (match[2] === 'refusals') entry.refusal_streak = Number(value);
    else if (match[2] === 'verified_at') entry.verified_at = Number(value);
    else if (match[2] === 'disabled_at') entry.disabled_at = Number(value);
    else if (match[2] === 'reason') entry.disabled_reason = value as DisableReason;
    else Object.assign(entry, JSON.parse(value) as Partial<WebhookRecord>);
  }
  return [...byId.values()]
    .filter((w): w is Partial<WebhookRecord> & { id: string } => typeof w.id === 'string')
    .map(
      (w) =>
        ({
          disabled_at: null,
          // Disabled before reasons were kept: the exhausted rule, or unregistered.
          disabled_reason: w.disabled_at == null ? null : (w.failure_streak ?? 0) >= 3 ? 'exhausted' : 'unregistered',
          verified_at: null,
          cursor: 0,
          failure_streak: 0,
          refusal_streak: 0,
          ...w,
        }) as WebhookRecord,
    )
    .sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
}
