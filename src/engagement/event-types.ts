/** The stored event vocabulary and the part of it that counts as activity (docs/agents.md, The REST loop). */

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
