/**
 * The read model of a room: plain data of the room and its decisions at one committed version.
 * Views, authentication and receipt building read this, never the actors themselves.
 */
import { nextDeadline } from './determination.js';
import type { RoomContext } from './room-acts.js';
import type { DecisionData, DecisionPhase } from './types.js';

export interface DecisionState {
  data: DecisionData;
  phase: DecisionPhase;
}

export interface RoomState {
  slug: string;
  version: number;
  /** Highest event seq. */
  head: number;
  room: RoomContext;
  /** All decisions in seq order. */
  decisions: DecisionState[];
  concluded: boolean;
}

export function openDecisions(state: RoomState): DecisionState[] {
  return state.room.openDecisionIds.map((id) => state.decisions.find((d) => d.data.id === id)!);
}

export function decisionById(state: RoomState, id: string): DecisionState | undefined {
  return state.decisions.find((d) => d.data.id === id);
}

/**
 * The next instant at which an expected participant invite expires after the roster was last
 * checked: expiry releases the roster gate (docs/how-decisions-end.md, Pending invites hold early close), so open decisions must re-evaluate then.
 */
function nextRosterExpiry(state: RoomState, after: number): number | null {
  let earliest: number | null = null;
  for (const invite of state.room.invites) {
    if (invite.role !== 'participant' || !invite.expected || invite.revokedAt !== null || invite.acceptedAt !== null)
      continue;
    if (invite.expiresAt === null || invite.expiresAt <= after) continue;
    if (earliest === null || invite.expiresAt < earliest) earliest = invite.expiresAt;
  }
  return earliest;
}

function rosterDue(state: RoomState): number | null {
  return state.room.openDecisionIds.length === 0 ? null : nextRosterExpiry(state, state.room.rosterCheckedAt);
}

/** The earliest instant at which time alone changes this room, or null. */
export function roomDeadline(state: RoomState): number | null {
  let earliest = rosterDue(state);
  for (const d of openDecisions(state)) {
    const at = nextDeadline(d.data, d.phase);
    if (at !== null && (earliest === null || at < earliest)) earliest = at;
  }
  return earliest;
}

export type DueWork = { kind: 'decision'; id: string; at: number } | { kind: 'roster'; at: number };

/**
 * What time has made due at or before `now`, earliest first: a decision deadline (ties by seq), or
 * an invite expiry that re-evaluates the roster gate (before decisions due at the same instant).
 */
export function dueWork(state: RoomState, now: number): DueWork | null {
  let best: { id: string; at: number; seq: number } | null = null;
  for (const d of openDecisions(state)) {
    const at = nextDeadline(d.data, d.phase);
    if (at === null || at > now) continue;
    if (!best || at < best.at || (at === best.at && d.data.seq < best.seq))
      best = { id: d.data.id, at, seq: d.data.seq };
  }
  const roster = rosterDue(state);
  if (roster !== null && roster <= now && (best === null || roster <= best.at)) return { kind: 'roster', at: roster };
  return best && { kind: 'decision', id: best.id, at: best.at };
}
