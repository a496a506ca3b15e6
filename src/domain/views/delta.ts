/**
 * `?since=N` and the delta entry vocabulary (docs/agents.md, The REST loop), rendered from the stored
 * event log. Hidden choices are redacted when served (docs/agents.md, The REST loop).
 */
import type { StoredEventLike } from './events.js';
import { redactEvent } from './events.js';
import type { RoomState } from '../state.js';
import {
  choicesCast,
  clip,
  eligibleVotersOf,
  openDecisions,
  owesChoice,
  type Reader,
  roomStatus,
  secondsUntil,
  sealedInSealOrder,
} from './common.js';
import { AGENT_SENTENCE } from './agent-view.js';

export const DELTA_LIMIT = 200;

export function deltaEntry(state: RoomState, stored: StoredEventLike): Record<string, unknown> | null {
  const event = redactEvent(state, stored);
  // Stored event data is written by the machines with known shapes (docs/agents.md, The REST loop); read it loosely here.
  // biome-ignore lint/suspicious/noExplicitAny: event data is a per-type record, read field by field
  const data = event.data as Record<string, any>;
  const base = { seq: event.seq, at: event.occurred_at, ...(data.seq !== undefined ? { decision: data.seq } : {}) };
  const agreement = data.agreement === true ? { agreement: true } : {};
  switch (event.event_type) {
    case 'discussion.posted':
      return {
        ...base,
        type: 'discussion',
        who: data.display_name,
        said: clip(String(data.body), 2000),
        ...(data.stance ? { stance: data.stance } : {}),
      };
    case 'option.proposed':
      return { ...base, type: 'option_proposed', who: data.proposed_by?.display_name ?? null, option: data.option };
    case 'decision.opened':
      return {
        ...base,
        type: 'decision_opened',
        who: data.opened_by?.display_name ?? null,
        question: data.question,
        ...agreement,
      };
    case 'decision.voting_phase_started': {
      const question = state.decisions.find((d) => d.data.seq === data.seq)?.data.question;
      return { ...base, type: 'choosing_started', ...(question ? { question } : {}) };
    }
    case 'vote.cast':
      return {
        ...base,
        type: 'choice_submitted',
        who: data.display_name,
        ...(data.choice_redacted
          ? {}
          : data.option_number !== undefined
            ? { option: data.option_number }
            : { choice: data.choice }),
        ...(data.revised ? { revised: true } : {}),
        ...agreement,
      };
    case 'choice.abstained':
      return { ...base, type: 'abstained', who: data.display_name, reason: data.reason };
    case 'decision.completed':
      return {
        ...base,
        type: 'decision_resolved',
        question: data.question,
        outcome: data.status,
        winner: data.winner ?? null,
        ...agreement,
      };
    case 'participant.joined':
      return { ...base, type: 'joined', who: data.name, role: data.role };
    case 'participant.role_updated':
      return { ...base, type: 'role_updated', who: data.name, role: data.role };
    case 'invite.created':
      return { ...base, type: 'invite_created', name: data.label, role: data.role };
    case 'room.concluded':
      return { ...base, type: 'room_concluded', ...(data.statement ? { closing_statement: data.statement } : {}) };
    default:
      return null;
  }
}

function stateLine(state: RoomState, now: number): string {
  if (state.concluded) return 'room closed (read-only)';
  const open = openDecisions(state);
  const oldest = open[0];
  if (oldest) {
    if (oldest.phase === 'proposing')
      return `seq ${oldest.data.seq} proposing — ${oldest.data.options.length} options so far`;
    let line = `seq ${oldest.data.seq} deciding — ${choicesCast(state, oldest)}/${eligibleVotersOf(state, oldest)} chosen`;
    if (oldest.phase === 'settling' && oldest.data.settling)
      line += `; settling, seals in ~${secondsUntil(oldest.data.settling.endsAt, now)}s`;
    if (open.length > 1) line += `; ${open.length - 1} more open`;
    return line;
  }
  const last = sealedInSealOrder(state).at(-1);
  return last ? `no open decision; last: seq ${last.data.seq} ${last.data.seal?.status}` : 'no decision yet';
}

export function delta(
  state: RoomState,
  reader: Reader,
  _since: number,
  events: StoredEventLike[],
  now: number,
): Record<string, unknown> {
  const slice = events.slice(0, DELTA_LIMIT);
  const complete = events.length <= DELTA_LIMIT;
  const owed = openDecisions(state).filter((d) => owesChoice(state, d, reader));
  const base = `/api/rooms/${state.slug}`;
  const body: Record<string, unknown> = {
    slug: state.slug,
    status: roomStatus(state, now),
    agent: AGENT_SENTENCE,
    state: stateLine(state, now),
    new: slice.map((e) => deltaEntry(state, e)).filter((e) => e !== null),
    current_through: complete ? state.head : slice.at(-1)!.seq,
  };
  if (owed.length === 1) body.your_status = 'you have not chosen on the open decision';
  if (owed.length > 1) {
    const seqs = owed.map((d) => d.data.seq);
    const list = `${seqs.slice(0, -1).join(', ')} and ${seqs.at(-1)}`;
    body.your_status = `you have not chosen on decisions ${list}; target each with decision: <seq>`;
  }
  if (reader.role !== 'participant') body.role = 'observer';
  body.more = {
    wait: `Wait for what needs you: GET ${base}/next-action?since_seq=${body.current_through} (MCP: wait with since).`,
    full: `Re-read the whole room: GET ${base} or GET ${base}?include=full (MCP: read_room).`,
  };
  return body;
}
