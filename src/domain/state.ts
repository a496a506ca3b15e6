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

/** The earliest instant at which time alone changes this room, or null. */
export function roomDeadline(state: RoomState): number | null {
  let earliest: number | null = null;
  for (const d of openDecisions(state)) {
    const at = nextDeadline(d.data, d.phase);
    if (at !== null && (earliest === null || at < earliest)) earliest = at;
  }
  return earliest;
}

/** The open decision due soonest at or before `now` (ties by seq), with its due instant. */
export function dueDecision(state: RoomState, now: number): { id: string; at: number } | null {
  let best: { id: string; at: number; seq: number } | null = null;
  for (const d of openDecisions(state)) {
    const at = nextDeadline(d.data, d.phase);
    if (at === null || at > now) continue;
    if (!best || at < best.at || (at === best.at && d.data.seq < best.seq))
      best = { id: d.data.id, at, seq: d.data.seq };
  }
  return best && { id: best.id, at: best.at };
}
