/**
 * Seats, invites, roles and settings (docs/concepts.md, Rooms): pure planning of each change; the
 * room machine applies the plan and emits its events.
 */
import type { Admission, InviteRequest, SeatRequest } from '../../machines/room.events.js';
import { invalidInput, type ProtocolError, protocolError } from '../errors.js';
import { applySettings } from './config.js';
import type { RoomContext } from './room-acts.js';
import { clip } from './format.js';
import { inviteStatus, isOperator, lookalikeSeatName, type NameInUse, uniqueDisplayName } from './roster.js';
import { howTheyDiffer, LOOKALIKE_RULE, namesLookAlike, seatNameLikeness } from './shown-text.js';
import type { Actor, InviteRecord, Member, Role, RoomConfig } from './types.js';

export type JoinPlan =
  | { kind: 'new'; member: Member; invite: InviteRecord | null }
  | { kind: 'recover'; member: Member; invite: InviteRecord }
  | { kind: 'reconnect'; member: Member };

function inviteInvalid(reason: string, message: string): ProtocolError {
  return protocolError('invite.invalid', `${message} Ask the room operator for a new invite.`, { details: { reason } });
}

function findInvite(room: RoomContext, admission: Admission, now: number): InviteRecord | ProtocolError | null {
  if (admission.inviteHash === undefined) return null;
  const invite = room.invites.find((i) => i.tokenHash === admission.inviteHash);
  if (!invite) return inviteInvalid('not_found', 'The invite token is not known in this room.');
  const status = inviteStatus(invite, now);
  if (status === 'revoked') return inviteInvalid('revoked', 'This invite was revoked.');
  if (status === 'expired') return inviteInvalid('expired', 'This invite has expired.');
  if (invite.binding.kind === 'principal' && admission.principal !== invite.binding.value) {
    return inviteInvalid('binding_mismatch', 'This invite is bound to another principal (mandate issuer).');
  }
  if (invite.binding.kind === 'account' && admission.account !== invite.binding.value) {
    return inviteInvalid('binding_mismatch', 'This invite is bound to another hosted account.');
  }
  return invite;
}

function admissionError(room: RoomContext, admission: Admission): ProtocolError | null {
  if (room.config.visibility !== 'private') return null;
  if (admission.passwordGiven && !admission.passwordOk) {
    return protocolError(
      'auth.invalid_password',
      `The password for room ${room.slug} is wrong. Check it, or join with a valid invite instead (POST /api/rooms/${room.slug}/join).`,
    );
  }
  if (admission.passwordOk) return null;
  return protocolError(
    'room.invite_required',
    `Room ${room.slug} is private: a new seat needs a valid invite${room.passwordHash ? ' or the room password' : ''}. Send {"invite": "it_…"}${room.passwordHash ? ' or {"password": "…"}' : ''} to POST /api/rooms/${room.slug}/join.`,
    {
      hint: 'Ask the room operator for an invite.',
      details: { slug: room.slug, password_supported: room.passwordHash !== null },
    },
  );
}

function capacityError(room: RoomContext): ProtocolError | null {
  const max = room.config.max_participants;
  if (max === null || room.members.length < max) return null;
  return protocolError(
    'room.at_capacity',
    `Room ${room.slug} is full: it already has ${max} seats (max_participants). Ask the operator to raise max_participants.`,
    { details: { max_participants: max } },
  );
}

/**
 * The seat a mandate join reconnects to (docs/architecture.md, Credentials): the one bound to the
 * joining (issuer, subject), or a seat stored before seats recorded their issuer that the caller
 * proved it reaches (auth/seat-binding.ts, named by `seat.provenSeatId`). A seat of another issuer
 * naming the same subject is never it: that issuer holds its own seat, and this one gets a new seat.
 */
function mandateSeatOf(room: RoomContext, seat: SeatRequest): Member | undefined {
  if (seat.agentDid === null) return undefined;
  const bound = room.members.find(
    (m) => m.agentDid === seat.agentDid && m.agentIss != null && m.agentIss === (seat.agentIss ?? null),
  );
  if (bound || seat.provenSeatId == null) return bound;
  return room.members.find((m) => m.id === seat.provenSeatId && m.agentDid === seat.agentDid && m.agentIss == null);
}

export function planJoin(
  room: RoomContext,
  seat: SeatRequest,
  admission: Admission,
  now: number,
): JoinPlan | ProtocolError {
  // A mandate whose (issuer, subject) already holds a seat reconnects to it (never a second one).
  const seated = mandateSeatOf(room, seat);
  if (seated) return { kind: 'reconnect', member: seated };
  const invite = findInvite(room, admission, now);
  if (invite instanceof Error) return invite;
  const usable = invite;
  if (usable?.acceptedParticipantId) {
    const holder = room.members.find((m) => m.id === usable.acceptedParticipantId);
    if (!holder) return inviteInvalid('unavailable', 'The seat of this invite no longer exists.');
    const rotated =
      holder.tokenHash !== null ? [...holder.supersededHashes, holder.tokenHash] : holder.supersededHashes;
    return {
      kind: 'recover',
      member: { ...holder, tokenHash: seat.tokenHash, supersededHashes: rotated },
      invite: usable,
    };
  }
  if (seat.via !== 'create' && usable === null) {
    const refused = admissionError(room, admission);
    if (refused) return refused;
  }
  const full = seat.via === 'create' ? null : capacityError(room);
  if (full) return full;
  // A name the caller chose may not pass for a seat already there (or one a pending invite holds):
  // the repeated-name suffix tells apart only names that are the same. An invite's label was
  // checked the same way when the invite was created.
  if (usable === null && seat.displayName !== undefined && seat.displayName !== null) {
    const like = lookalikeSeatName(room, seat.displayName, now);
    if (like !== null) {
      return lookalikeNameError(
        'display_name',
        seat.displayName,
        like,
        `the join_room action / POST /api/rooms/${room.slug}/join`,
      );
    }
  }
  const wanted = usable?.label ?? seat.displayName ?? `participant-${room.members.length + 1}`;
  const member: Member = {
    id: seat.id,
    displayName: seat.via === 'create' ? wanted : uniqueDisplayName(room, wanted),
    role: usable?.role ?? seat.role,
    isCreator: seat.via === 'create',
    joinedAt: now,
    deliberatedAt: null,
    votedAt: null,
    tokenHash: seat.tokenHash,
    supersededHashes: [],
    agentDid: seat.agentDid,
    ...(seat.agentDid !== null ? { agentIss: seat.agentIss ?? null } : {}),
    mandateId: seat.mandateId,
  };
  const accepted = usable ? { ...usable, acceptedAt: now, acceptedParticipantId: member.id } : null;
  return { kind: 'new', member, invite: accepted };
}

/** input.invalid for a seat name that reads the same as one already in the room. */
function lookalikeNameError(field: string, offered: string, like: NameInUse, route: string): ProtocolError {
  const existing = clip(like.name, 100);
  const where =
    like.kind === 'seat'
      ? `the seat "${existing}" already in this room`
      : `"${existing}", the label of an invite already in this room`;
  return invalidInput(
    field,
    `The name "${clip(offered, 100)}" reads the same as ${where}: ${howTheyDiffer(like.name, offered)}. ${LOOKALIKE_RULE} so others could not tell the two seats apart. Choose a name that differs visibly (${route}).`,
    'lookalike',
    { like_name: like.name },
  );
}

/**
 * A label that looks like a seat's name or another live invite's label (the very same label is
 * refused above). Two pending labels that are the same name but for case or spaces are refused too:
 * their seats would be told apart only by the " (2)" of whichever is redeemed second.
 */
function lookalikeLabel(room: RoomContext, label: string, now: number): NameInUse | null {
  const like = lookalikeSeatName(room, label, now);
  if (like !== null) return like;
  const offered = seatNameLikeness(label);
  const twin = room.invites.find((i) => {
    const status = inviteStatus(i, now);
    if (i.label === label || (status !== 'pending' && status !== 'accepted')) return false;
    const other = seatNameLikeness(i.label);
    return namesLookAlike(other, offered) || (status === 'pending' && other.identity === offered.identity);
  });
  return twin ? { name: twin.label, kind: 'invite' } : null;
}

export function operatorOnly(actor: Actor, action: string, route: string): ProtocolError | null {
  if (isOperator(actor)) return null;
  return protocolError(
    'authority.denied',
    `Only the room operator (the creator token or the admin token) can ${action} (${route}).`,
    { details: { authority: 'operator', required: 'operator' } },
  );
}

export function planInvite(room: RoomContext, request: InviteRequest, now: number): InviteRecord | ProtocolError {
  const route = `POST /api/rooms/${room.slug}/invites`;
  const taken = room.invites.some((i) => {
    const status = inviteStatus(i, now);
    return (status === 'pending' || status === 'accepted') && i.label === request.label;
  });
  if (taken)
    return invalidInput(
      'label',
      `An invite labelled "${request.label}" already exists in this room; labels name seats and must be unique (${route}).`,
      'invalid_value',
    );
  const like = lookalikeLabel(room, request.label, now);
  if (like !== null) return lookalikeNameError('label', request.label, like, route);
  if (request.expiresAt !== null && request.expiresAt <= now) {
    return invalidInput('expires_at', `expires_at must be in the future (${route}).`, 'out_of_range');
  }
  return {
    code: request.code,
    label: request.label,
    role: request.role,
    expected: request.expected,
    tokenHash: request.tokenHash,
    binding: request.binding,
    createdAt: now,
    expiresAt: request.expiresAt,
    acceptedAt: null,
    acceptedParticipantId: null,
    revokedAt: null,
  };
}

/** The member named by id or by an unambiguous display name. */
export function resolveMember(room: RoomContext, target: string, route: string): Member | ProtocolError {
  const byId = room.members.find((m) => m.id === target);
  if (byId) return byId;
  const byName = room.members.filter((m) => m.displayName === target);
  if (byName.length === 1) return byName[0]!;
  return invalidInput(
    'participant',
    byName.length > 1
      ? `"${target}" names several members; use the participant id instead (${route}).`
      : `No member "${target}" in room ${room.slug}; use a participant id or an exact display name (${route}).`,
    'invalid_value',
  );
}

export function planRole(room: RoomContext, target: string, role: Role, route: string): Member | ProtocolError {
  const member = resolveMember(room, target, route);
  if (member instanceof Error) return member;
  if (member.isCreator) {
    return invalidInput('participant', `The creator seat's role cannot be changed (${route}).`, 'immutable_key');
  }
  return { ...member, role };
}

export function planSettings(
  room: RoomContext,
  settings: unknown,
): { config: RoomConfig; changed: string[] } | ProtocolError {
  try {
    return applySettings(room.config, settings);
  } catch (error) {
    return error as ProtocolError;
  }
}
