/** Serving stored events (docs/agents.md, The REST loop): the wire RoomEvent, with hidden choices redacted at serve time. */
import type { RoomState } from '../state.js';
import { choicesVisible } from './common.js';

export interface StoredEventLike {
  id: string;
  seq: number;
  event_type: string;
  occurred_at: string;
  decision_id: string | null;
  data: Record<string, unknown>;
}

export interface RoomEventView {
  id: string;
  seq: number;
  event_type: string;
  occurred_at: string;
  decision_id: string | null;
  data: Record<string, unknown>;
}

export function redactEvent(state: RoomState, event: StoredEventLike): RoomEventView {
  const view: RoomEventView = {
    id: event.id,
    seq: event.seq,
    event_type: event.event_type,
    occurred_at: event.occurred_at,
    decision_id: event.decision_id,
    data: event.data,
  };
  if (event.event_type !== 'vote.cast') return view;
  const decision = state.decisions.find((d) => d.data.id === event.decision_id);
  if (decision && choicesVisible(state, decision)) return view;
  const { option_number: _n, choice: _c, ...rest } = event.data;
  return { ...view, data: { ...rest, choice_redacted: true } };
}
