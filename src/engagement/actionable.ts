/**
 * What makes a long-poll answer (docs/agents.md, The REST loop): pure functions of the committed room state, plus two facts
 * gathered by the caller (the first activity event after the cursor, and the oldest opener-seal wake
 * not yet consumed).
 */
import type { DecisionState, RoomState } from '../domain/state.js';
import {
  electorateOf,
  mayBeAsked,
  openDecisions,
  owesChoice,
  type Reader,
  sealedInSealOrder,
} from '../domain/views/common.js';
import type { StoredEvent } from '../store/port.js';
import { isSubstantive } from './event-types.js';

export type WaitMode = 'my_choice' | 'completion' | 'activity';

export interface WaitQuery {
  mode: WaitMode;
  reader: Reader;
  /** completion: a decision-seq watermark; activity: an event-seq cursor; my_choice: unused. */
  sinceSeq: number;
}

export type Wake =
  | { kind: 'owed'; decisions: DecisionState[] }
  | { kind: 'opener_seal'; decision: DecisionState }
  | { kind: 'completed'; decision: DecisionState }
  | { kind: 'activity'; event: StoredEvent }
  /** The room is concluded and nothing is left to report: answer with the closed-room timeout. */
  | { kind: 'closed' }
  /**
   * my_choice: decisions were opened, but no open one can need the reader's choice (they sealed, or the
   * reader is not in the electorate of those still open): answer at once, saying so (docs/agents.md, The REST loop).
   */
  | { kind: 'over'; reader: Reader };

export interface WakeFacts {
  /** The oldest sealed decision the caller opened whose wake it has not consumed, or null. */
  openerSeal: DecisionState | null;
  /** The first event after the cursor that counts as activity for the caller, or null. */
  activity: StoredEvent | null;
}

/**
 * Everything `evaluateWake` (and the facts gathered for it) reads of a query, as a key: waiters whose
 * queries share it get the same wake from the same state, so one evaluation pass evaluates each key
 * once. A completion wait reads only its watermark; the others read the reader's seat and role too.
 */
export function wakeKey(query: WaitQuery): string {
  if (query.mode === 'completion') return `completion|${query.sinceSeq}`;
  return `${query.mode}|${query.sinceSeq}|${query.reader.role}|${query.reader.participantId ?? ''}`;
}

export function evaluateWake(state: RoomState, query: WaitQuery, facts: WakeFacts): Wake | null {
  if (query.mode === 'completion') {
    const decision = completedAfter(state, query.sinceSeq);
    if (decision) return { kind: 'completed', decision };
    return state.concluded ? { kind: 'closed' } : null;
  }
  // On a concluded room nothing is owed again (docs/agents.md, The REST loop).
  if (!state.concluded) {
    const owed = owedDecisions(state, query.reader);
    if (owed.length > 0) return { kind: 'owed', decisions: owed };
    if (facts.openerSeal) return { kind: 'opener_seal', decision: facts.openerSeal };
  }
  if (query.mode === 'activity' && facts.activity) return { kind: 'activity', event: facts.activity };
  if (state.concluded) return { kind: 'closed' };
  // A room that never had a decision waits for its first; activity waits are the wait for what comes next.
  if (query.mode === 'my_choice' && state.decisions.length > 0 && !mayBeAsked(state, query.reader)) {
    return { kind: 'over', reader: query.reader };
  }
  return null;
}

/** Decisions that need the reader's choice, oldest first (the `my_choice` rule). */
export function owedDecisions(state: RoomState, reader: Reader): DecisionState[] {
  return openDecisions(state).filter((d) =>
    d.data.agreement ? owesAgreementAcceptance(state, d, reader) : owesChoice(state, d, reader),
  );
}

/**
 * An agreement decision needs the reader only for a complete offer: every other eligible voter has
 * accepted the same option and the reader has not accepted that one (docs/how-decisions-end.md, Agreement decisions).
 */
function owesAgreementAcceptance(state: RoomState, d: DecisionState, reader: Reader): boolean {
  const me = reader.participantId;
  if (me === null || reader.role !== 'participant') return false;
  if ((d.phase !== 'voting' && d.phase !== 'settling') || d.data.options.length === 0) return false;
  const electorate = electorateOf(state, d);
  if (!electorate.includes(me)) return false;
  const acceptance = (id: string) => {
    const ballot = d.data.ballots.find((b) => b.participantId === id)?.ballot;
    return ballot === undefined ? undefined : JSON.stringify(ballot);
  };
  const offers = electorate.filter((id) => id !== me).map(acceptance);
  if (offers.length === 0) return acceptance(me) === undefined;
  const offer = offers[0];
  if (offer === undefined || offers.some((o) => o !== offer)) return false;
  return acceptance(me) !== offer;
}

/** The lowest-seq sealed decision above the watermark. */
export function completedAfter(state: RoomState, sinceSeq: number): DecisionState | null {
  let found: DecisionState | null = null;
  for (const d of sealedInSealOrder(state)) {
    if (d.data.seq > sinceSeq && (found === null || d.data.seq < found.data.seq)) found = d;
  }
  return found;
}

/** Sealed decisions this participant opened, in seal order: candidates for the opener-seal wake. */
export function sealedOpenedBy(state: RoomState, participantId: string | null): DecisionState[] {
  if (participantId === null) return [];
  return sealedInSealOrder(state).filter((d) => d.data.openedBy.participantId === participantId);
}

/** Whether an event wakes this caller's activity wait: substantive, and not the caller's own act. */
export function isActivityFor(event: StoredEvent, participantId: string | null): boolean {
  // Deadline-caused events carry no actor and wake everyone.
  return isSubstantive(event.event_type) && (event.actor === null || event.actor !== participantId);
}

/** Which facts an evaluation of this query can use, so callers gather only those. */
export function factsNeeded(state: RoomState, query: WaitQuery): { openerSeal: boolean; activity: boolean } {
  return {
    openerSeal:
      query.mode !== 'completion' && !state.concluded && sealedOpenedBy(state, query.reader.participantId).length > 0,
    activity: query.mode === 'activity',
  };
}
