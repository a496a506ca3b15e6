/** Webhooks and deliveries as the Redis engagement store writes and reads them (redis-engagement.ts). */
import type { DeliveryRecord, DeliveryStatus, WebhookRecord } from './engagement-port.js';

const WEBHOOK_FIELD = /^([^:]+)(?::(cursor|streak|disabled_at))?$/;

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
  const [status, attempts, nextAt, seq] = value.split(' ');
  return {
    slug,
    webhook_id: webhookId,
    event_id: eventId,
    seq: Number(seq),
    status: status as DeliveryStatus,
    attempts: Number(attempts),
    next_attempt_at: nextAt === '-' || nextAt === undefined ? null : Number(nextAt),
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
    else if (match[2] === 'disabled_at') entry.disabled_at = Number(value);
    else Object.assign(entry, JSON.parse(value) as Partial<WebhookRecord>);
  }
  return [...byId.values()]
    .filter((w): w is Partial<WebhookRecord> & { id: string } => typeof w.id === 'string')
    .map((w) => ({ disabled_at: null, cursor: 0, failure_streak: 0, ...w }) as WebhookRecord)
    .sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
}
