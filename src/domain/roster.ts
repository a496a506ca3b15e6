/**
 * Who is who in a room: members by id or credential, authority checks (docs/concepts.md, Authority),
 * the room and decision electorates (docs/how-decisions-end.md, Who counts) and the roster gate (docs/how-decisions-end.md, Pending invites hold early close).
 */
import { protocolError, type ProtocolError } from '../errors.js';
import { namesLookAlike, type SeatNameLikeness, seatNameLikeness } from './shown-text.js';
import type { Actor, AuthorityConfig, DecisionData, InviteRecord, Member, RoomData } from './types.js';

export function memberById(room: Pick<RoomData, 'members'>, id: string | null): Member | undefined {
  return id === null ? undefined : seatsById.find(room.members, id);
}

/**
 * A lookup from one key of a member to where the member sits, built once per roster array and
 * remembered (room contexts are immutable): a hot room looks its callers and voters up on every
 * call. The first member with a key wins; members without one are not indexed. A vote stamp keeps
 * every position, id and token, so the stamped roster inherits the index (withVoteStamped).
 */
class RosterIndex {
  private readonly byRoster = new WeakMap<readonly Member[], ReadonlyMap<string, number>>();

  constructor(private readonly keyOf: (member: Member) => string | null) {}

  positions(members: readonly Member[]): ReadonlyMap<string, number> {
    let positions = this.byRoster.get(members);
    if (!positions) {
      const built = new Map<string, number>();
      members.forEach((member, at) => {
        const key = this.keyOf(member);
        if (key !== null && !built.has(key)) built.set(key, at);
      });
      positions = built;
      this.byRoster.set(members, positions);
    }
    return positions;
  }

  find(members: readonly Member[], key: string): Member | undefined {
    const at = this.positions(members).get(key);
    return at === undefined ? undefined : members[at];
  }

  /** `stamped` keeps every member of `members` where it sat, with the same key. */
  inherit(members: readonly Member[], stamped: readonly Member[]): void {
    const known = this.byRoster.get(members);
    if (known) this.byRoster.set(stamped, known);
  }
}

const seatsById = new RosterIndex((member) => member.id);
/** Every call with a bearer token finds its member here instead of walking a thousand-seat roster. */
const seatsByTokenHash = new RosterIndex((member) => member.tokenHash);

export function memberByTokenHash(members: readonly Member[], hash: string): Member | undefined {
  return seatsByTokenHash.find(members, hash);
}

export function isParticipant(room: RoomData, id: string | null): boolean {
  return memberById(room, id)?.role === 'participant';
}

/** Holds an operator credential: the creator seat's token, or the admin token. */
export function isOperator(actor: Actor): boolean {
  return actor.isOperator || actor.isAdmin;
}

export function satisfiesAuthority(room: RoomData, actor: Actor, authority: AuthorityConfig): boolean {
  if (authority.kind === 'none') return false;
  const member = memberById(room, actor.participantId);
  if (member?.role === 'observer') return false;
  if (authority.kind === 'operator') return isOperator(actor);
  if (authority.kind === 'designated') {
    return actor.participantId !== null && (authority.participant_ids ?? []).includes(actor.participantId);
  }
  return isOperator(actor) || member?.role === 'participant';
}

export function authorityDenied(
  name: string,
  authority: AuthorityConfig,
  actionText: string,
  route: string,
): ProtocolError {
  const who =
    authority.kind === 'none'
      ? 'nobody'
      : authority.kind === 'operator'
        ? 'the room operator (creator token or admin token)'
        : authority.kind === 'designated'
          ? 'the designated participants'
          : 'any participant (not observers)';
  return protocolError(
    'authority.denied',
    `You are not allowed to ${actionText} in this room: ${name} is "${authority.kind}", which allows ${who}. (${route})`,
    {
      hint: 'Ask the room operator to perform this act or to change the room settings.',
      details: { authority: name, required: authority.kind },
    },
  );
}

/** Seat acts (discuss, propose, choose, abstain) need a participant seat: observers and the admin token are refused. */
export function requireSeatActor(
  room: RoomData,
  actor: Actor,
  actionText: string,
  route: string,
): ProtocolError | null {
  const member = memberById(room, actor.participantId);
  if (!member) {
    return protocolError(
      'authority.denied',
      `Only a member seat can ${actionText}; the admin token has no seat. Join the room and use the participant token. (${route})`,
      { details: { authority: 'seat', required: 'participant' } },
    );
  }
  if (member.role !== 'participant') {
    return protocolError(
      'authority.denied',
      `Observers read and wait but cannot ${actionText}. Ask the operator to change your role to participant. (${route})`,
      { details: { authority: 'role', required: 'participant' } },
    );
  }
  return null;
}

/** Participants minus the creator when creator_votes is false. */
export function roomElectorate(room: RoomData): string[] {
  const creatorVotes = room.config.creator_votes;
  const known = roomElectorates.get(room.members);
  if (known?.creatorVotes === creatorVotes) return known.ids;
  const ids = room.members.filter((m) => m.role === 'participant' && (creatorVotes || !m.isCreator)).map((m) => m.id);
  // Frozen: every caller holding this roster shares it.
  roomElectorates.set(room.members, { creatorVotes, ids: Object.freeze(ids) as string[] });
  return ids;
}

/**
 * The room electorate, remembered per roster array: it is asked for on every ballot, and the
 * same array while the roster stands lets determination keep what it derives from it.
 */
const roomElectorates = new WeakMap<readonly Member[], { creatorVotes: boolean; ids: string[] }>();

/**
 * An identity for who holds which seat in a roster: the same object for rosters that differ only by
 * vote stamps (every seat, id, role, token and binding kept), a new one for any other roster. Lets a
 * caller that resolved a credential against one roster reuse the answer for the next commit's roster
 * when only a vote was cast (engagement/credential-watch.ts).
 */
export function seatingOf(members: readonly Member[]): object {
  let seating = seatings.get(members);
  if (!seating) {
    seating = {};
    seatings.set(members, seating);
  }
  return seating;
}

const seatings = new WeakMap<readonly Member[], object>();

/** The roster with one member's vote stamped: who sits where and who may vote are unchanged, so both carry over. */
export function withVoteStamped(members: Member[], participantId: string, at: number): Member[] {
  const index = seatsById.positions(members).get(participantId);
  if (index === undefined) return members;
  const stamped = members.slice();
  stamped[index] = { ...members[index]!, votedAt: at };
  seatsById.inherit(members, stamped);
  seatsByTokenHash.inherit(members, stamped);
  seatings.set(stamped, seatingOf(members));
  const known = roomElectorates.get(members);
  if (known) roomElectorates.set(stamped, known);
  return stamped;
}

export function decisionElectorate(room: RoomData, decision: Pick<DecisionData, 'eligibleIds'>): string[] {
  if (decision.eligibleIds === null) return roomElectorate(room);
  const participants = new Set(room.members.filter((m) => m.role === 'participant').map((m) => m.id));
  return decision.eligibleIds.filter((id) => participants.has(id));
}

export function inviteStatus(invite: InviteRecord, now: number): 'pending' | 'accepted' | 'revoked' | 'expired' {
  if (invite.revokedAt !== null) return 'revoked';
  if (invite.acceptedAt !== null) return 'accepted';
  if (invite.expiresAt !== null && invite.expiresAt <= now) return 'expired';
  return 'pending';
}

export function rosterGateOpen(room: RoomData, now: number): boolean {
  return room.invites.some((i) => i.role === 'participant' && i.expected && inviteStatus(i, now) === 'pending');
}

/**
 * A seat's name in comparison forms, remembered per member record (records are immutable; a renamed
 * seat is a new record): without it every join normalized every name on the roster again, and a
 * thousand-seat room's joins cost the square of its size.
 */
const seatNameLikenesses = new WeakMap<Member | InviteRecord, SeatNameLikeness>();

function likenessOf(record: Member | InviteRecord, name: string): SeatNameLikeness {
  let likeness = seatNameLikenesses.get(record);
  if (likeness === undefined) {
    likeness = seatNameLikeness(name);
    seatNameLikenesses.set(record, likeness);
  }
  return likeness;
}

const seatLikeness = (member: Member) => likenessOf(member, member.displayName);

/** A seat name in use: a seat's display name, or a pending invite's label (the name of its seat to be). */
export interface NameInUse {
  name: string;
  kind: 'seat' | 'invite';
}

/**
 * The name in use that `wanted` looks like without being the same name, or null: such a name is
 * refused, since the protocol's " (2)" only tells apart names that are the same (case-insensitively).
 */
export function lookalikeSeatName(room: RoomData, wanted: string, now: number): NameInUse | null {
  const offered = seatNameLikeness(wanted);
  for (const member of room.members) {
    if (namesLookAlike(seatLikeness(member), offered)) return { name: member.displayName, kind: 'seat' };
  }
  for (const invite of room.invites) {
    if (inviteStatus(invite, now) !== 'pending') continue;
    if (namesLookAlike(likenessOf(invite, invite.label), offered)) return { name: invite.label, kind: 'invite' };
  }
  return null;
}

/**
 * Names compare as others read them: case, NFKC forms, spaces, invisible characters and look-alike
 * letters set aside. A name already taken gets the protocol's " (2)", " (3)", …
 */
export function uniqueDisplayName(room: RoomData, wanted: string): string {
  const identities = new Set<string>();
  const shapes = new Set<string>();
  for (const member of room.members) {
    const likeness = seatLikeness(member);
    identities.add(likeness.identity);
    shapes.add(`0${likeness.shapes[0]}`).add(`1${likeness.shapes[1]}`);
  }
  const taken = (name: string) => {
    const likeness = seatNameLikeness(name);
    return (
      identities.has(likeness.identity) || shapes.has(`0${likeness.shapes[0]}`) || shapes.has(`1${likeness.shapes[1]}`)
    );
  };
  if (!taken(wanted)) return wanted;
  for (let n = 2; ; n++) {
    const candidate = `${wanted} (${n})`;
    if (!taken(candidate)) return candidate;
  }
}
