/** Shared pieces of the read views: room status, the reader, decision status and wording helpers. */
import { countedBallots } from '../determination.js';
import { decisionElectorate, memberById, satisfiesAuthority } from '../roster.js';
import { openDecisions } from '../state.js';
import type { DecisionState, RoomState } from '../state.js';

export { clip, iso } from '../format.js';
export { openDecisions };
import type { Actor } from '../types.js';

export type RoomStatus = 'open' | 'proposing' | 'voting' | 'expired' | 'resolved' | 'concluded';

/** Who is reading: a member seat, or an observer-like reader (anonymous, password, admin). */
export interface Reader {
  participantId: string | null;
  role: 'participant' | 'observer';
  actor: Actor | null;
}

export function sealedInSealOrder(state: RoomState): DecisionState[] {
  return state.room.sealOrder.map((id) => state.decisions.find((d) => d.data.id === id)!);
}

export function roomStatus(state: RoomState, now: number): RoomStatus {
  if (state.concluded) return 'concluded';
  const oldest = openDecisions(state)[0];
  if (oldest) {
    const s = decisionStatus(oldest, now);
    return s === 'resolved' ? 'resolved' : s;
  }
  return state.decisions.length === 0 ? 'open' : 'resolved';
}

export function decisionStatus(d: DecisionState, now: number): 'proposing' | 'voting' | 'expired' | 'resolved' {
  if (d.phase === 'resolved' || d.phase === 'sealed') return 'resolved';
  if (d.data.votingEndsAt <= now) return 'expired';
  return d.phase === 'proposing' ? 'proposing' : 'voting';
}

export function electorateOf(state: RoomState, d: DecisionState): string[] {
  return decisionElectorate(state.room, d.data);
}

export function eligibleVotersOf(state: RoomState, d: DecisionState): number {
  return Math.max(electorateOf(state, d).length, state.room.config.quorum ?? 0);
}

export function choicesCast(state: RoomState, d: DecisionState): number {
  return countedBallots(d.data, electorateOf(state, d)).length;
}

export function hasResponded(d: DecisionState, participantId: string): boolean {
  return (
    d.data.ballots.some((b) => b.participantId === participantId) ||
    d.data.abstentions.some((a) => a.participantId === participantId)
  );
}

/** The reader owes a choice on this decision (the `my_choice` rule of docs/agents.md, The REST loop, agreement offers aside). */
export function owesChoice(state: RoomState, d: DecisionState, reader: Reader): boolean {
  if (reader.participantId === null || reader.role !== 'participant') return false;
  if (d.phase !== 'voting' && d.phase !== 'settling') return false;
  if (d.data.options.length === 0) return false;
  if (!electorateOf(state, d).includes(reader.participantId)) return false;
  return !hasResponded(d, reader.participantId);
}

/**
 * Whether an open decision can still need the reader's choice: it is a participant in the electorate
 * of one (collecting options, voting or settling; chosen already or not, a my_choice wait lasts until it
 * seals). When decisions were opened and none can, a my_choice wait answers at once (docs/agents.md, The REST loop).
 */
export function mayBeAsked(state: RoomState, reader: Reader): boolean {
  const me = reader.participantId;
  if (me === null || reader.role !== 'participant') return false;
  return openDecisions(state).some((d) => electorateOf(state, d).includes(me));
}

export function displayName(state: RoomState, participantId: string | null): string {
  if (participantId === null) return 'operator';
  return memberById(state.room, participantId)?.displayName ?? 'former member';
}

export function mayOpenDecision(state: RoomState, reader: Reader): boolean {
  return reader.actor !== null && reader.role === 'participant'
    ? satisfiesAuthority(state.room, reader.actor, state.room.config.decision_opening_authority)
    : false;
}

export function mayPropose(state: RoomState, reader: Reader): boolean {
  return reader.actor !== null && reader.role === 'participant'
    ? satisfiesAuthority(state.room, reader.actor, state.room.config.option_proposal_authority)
    : false;
}

export function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.floor((at - now) / 1000));
}

export function humanDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(seconds / 3600);
  if (hours < 48) return `${hours} hours`;
  return `${Math.round(seconds / 86400)} days`;
}

/** Individual choices are visible on this decision under the room's choice_visibility (docs/how-decisions-end.md, Who sees the ballots). */
export function choicesVisible(state: RoomState, d: DecisionState): boolean {
  const v = state.room.config.choice_visibility;
  return v === 'live' || (v === 'after_decided' && (d.phase === 'resolved' || d.phase === 'sealed'));
}

export function proposalsOpen(state: RoomState, d: DecisionState): boolean {
  if (state.concluded) return false;
  if (state.room.config.option_proposal_authority.kind === 'none') return false;
  if (d.phase === 'proposing') return true;
  return (d.phase === 'voting' || d.phase === 'settling') && d.data.votingOpensAt === null;
}
