/** The stored event vocabulary (06 §1.3) and the part of it that counts as activity (06 §2.1). */

export const EVENT_TYPES = [
  'participant.joined',
  'participant.role_updated',
  'invite.created',
  'invite.accepted',
  'invite.revoked',
  'room.settings_updated',
  'decision.opened',
  'option.proposed',
  'decision.voting_phase_started',
  'discussion.posted',
  'vote.cast',
  'choice.abstained',
  'decision.completed',
  'room.concluded',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const SUBSTANTIVE: ReadonlySet<string> = new Set([
  'discussion.posted',
  'option.proposed',
  'choice.abstained',
  'decision.opened',
  'decision.voting_phase_started',
  'decision.completed',
  'room.concluded',
]);

/** Events that wake `for=activity` waits; choices, joins, roles, invites and settings do not. */
export function isSubstantive(eventType: string): boolean {
  return SUBSTANTIVE.has(eventType);
}
