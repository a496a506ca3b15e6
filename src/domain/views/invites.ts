/** RoomInvite (docs/concepts.md, Invites): never shows the raw invite token. */
import { inviteStatus } from '../roster.js';
import type { InviteRecord } from '../types.js';
import { iso } from './common.js';

export function inviteView(invite: InviteRecord, now: number): Record<string, unknown> {
  return {
    code: invite.code,
    label: invite.label,
    role: invite.role,
    expected: invite.expected,
    status: inviteStatus(invite, now),
    binding: { kind: invite.binding.kind, value: invite.binding.kind === 'token' ? null : invite.binding.value },
    created_at: iso(invite.createdAt),
    expires_at: iso(invite.expiresAt),
    accepted_at: iso(invite.acceptedAt),
    accepted_participant_id: invite.acceptedParticipantId,
    revoked_at: iso(invite.revokedAt),
  };
}
