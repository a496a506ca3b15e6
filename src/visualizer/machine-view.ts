/**
 * Where a room's actors are, and how they got there. The current state comes from the live actors
 * (RoomState); the timeline is rebuilt from the room's stored events, each machine step beside the
 * event that caused it. Nothing here reads ballots: a reader learns state names, event types and
 * decision ids — what the agent view and the event log already show every reader.
 *
 * Events do not record when a decision began settling, so the timeline places that step at the
 * event of the determining instant (the live settle record, or a sealed decision's
 * `votingEndedAt` when its seal came after it); with settle restarts it shows the last window.
 */
import type { DecisionState, RoomState } from '../domain/state.js';
import type { DecisionData, DecisionPhase } from '../domain/types.js';
import type { StoredEvent } from '../store/port.js';

export interface StateStep {
  seq: number;
  event_id: string;
  event_type: string;
  occurred_at: string;
  /** The decision actor that moved; null for the room actor. */
  decision_id: string | null;
  chart: 'room' | 'decision';
  from: string | null;
  to: string;
  /** The machine event (and guard) that took the step. */
  cause: string;
}

const DECISION_NODE: Record<DecisionPhase, string> = {
  proposing: 'decision.proposing',
  voting: 'decision.voting.open',
  settling: 'decision.voting.settling',
  sealed: 'decision.sealed',
  resolved: 'decision.resolved',
};

export function decisionNode(decision: DecisionState): string {
  return DECISION_NODE[decision.phase];
}

export function roomNode(state: RoomState): string {
  if (state.room.conclusion) return 'room.concluded';
  if (state.concluded) return 'room.concluding';
  return state.room.openDecisionIds.length > 0 ? 'room.active.deciding' : 'room.active.open';
}

/** The instant a decision was determined and began the settle window it sealed after (or is in). */
function settleStart(data: DecisionData): number | null {
  if (data.settling) return data.settling.determinedAt;
  if (data.seal && data.seal.at > data.seal.votingEndedAt) return data.seal.votingEndedAt;
  return null;
}

/**
 * For each decision that settled (or is settling), the seq of the event that determined it: the
 * last of its events at the determining instant before it sealed.
 */
function settlingEvents(state: RoomState, events: readonly StoredEvent[]): Set<number> {
  const starts = new Map<string, number>();
  for (const decision of state.decisions) {
    const start = settleStart(decision.data);
    if (start !== null) starts.set(decision.data.id, start);
  }
  const last = new Map<string, number>();
  for (const event of events) {
    const id = event.decision_id;
    if (!id || event.event_type === 'decision.completed' || !starts.has(id)) continue;
    if (Date.parse(event.occurred_at) === starts.get(id)) last.set(id, event.seq);
  }
  return new Set(last.values());
}

export function timelineOf(state: RoomState, events: readonly StoredEvent[]): StateStep[] {
  const decisions = new Map(state.decisions.map((d) => [d.data.id, d.data]));
  const determining = settlingEvents(state, events);
  const at = new Map<string, string>();
  const open = new Set<string>();
  let room = 'room.active.open';
  const steps: StateStep[] = [];

  for (const event of events) {
    const step = (chart: 'room' | 'decision', to: string, cause: string, decisionId: string | null) => {
      const from = chart === 'room' ? room : (at.get(decisionId!) ?? null);
      if (from === to) return;
      steps.push({
        seq: event.seq,
        event_id: event.id,
        event_type: event.event_type,
        occurred_at: event.occurred_at,
        decision_id: decisionId,
        chart,
        from,
        to,
        cause,
      });
      if (chart === 'room') room = to;
      else at.set(decisionId!, to);
    };
    const id = event.decision_id;
    const instant = Date.parse(event.occurred_at);
    const data = id ? decisions.get(id) : undefined;
    switch (event.event_type) {
      case 'decision.opened': {
        if (!id) break;
        const slate = event.data.status === 'proposing';
        step(
          'decision',
          slate ? 'decision.proposing' : 'decision.voting.open',
          slate ? 'always [isSlate]' : 'always',
          id,
        );
        open.add(id);
        step('room', 'room.active.deciding', 'always [hasOpenDecisions]', null);
        break;
      }
      case 'decision.voting_phase_started':
        if (!id) break;
        step(
          'decision',
          'decision.voting.open',
          event.data.started_by ? 'D.START_CHOOSING' : 'D.ADVANCE [proposalWindowDue]',
          id,
        );
        break;
      case 'decision.completed': {
        if (!id) break;
        const settled = at.get(id) === 'decision.voting.settling';
        const windowDue = data !== undefined && instant >= data.votingEndsAt;
        const cause = settled
          ? 'D.ADVANCE [settleDue]'
          : windowDue
            ? 'D.ADVANCE [votingWindowDue]'
            : 'D.EVALUATE [determinedSealNow]';
        step('decision', 'decision.sealed', cause, id);
        step('decision', 'decision.resolved', 'D.RECEIPT', id);
        open.delete(id);
        if (open.size === 0) step('room', 'room.active.open', 'always [noOpenDecisions]', null);
        break;
      }
      case 'room.concluded':
        step('room', 'room.concluding', 'CLOSE [mayClose]', null);
        step('room', 'room.concluded', 'RECEIPT_SIGNED', null);
        break;
    }
    // Settling is not an event of its own: it begins at the determining instant.
    if (id && determining.has(event.seq) && at.get(id) === 'decision.voting.open') {
      step('decision', 'decision.voting.settling', 'D.EVALUATE [determined]', id);
    }
  }
  return steps;
}
