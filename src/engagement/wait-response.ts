/** The next-action response bodies (docs/agents.md, The REST loop) for a wake, or for a timeout. */
import type { DecisionState, RoomState } from '../domain/state.js';
import {
  clip,
  decisionStatus,
  hasResponded,
  iso,
  openDecisions,
  type Reader,
  sealedInSealOrder,
} from '../domain/views/common.js';
import { deltaEntry } from '../domain/views/delta.js';
import type { WaitMode, Wake } from './actionable.js';

export function wakeBody(state: RoomState, mode: WaitMode, wake: Wake, now: number): Record<string, unknown> {
  switch (wake.kind) {
    case 'owed': {
      const [first, ...rest] = wake.decisions;
      return {
        status: 'actionable',
        for: mode,
        decision: decisionCard(first!, now),
        ...(rest.length > 0 ? { also_actionable: rest.map((d) => decisionCard(d, now)) } : {}),
      };
    }
    case 'opener_seal':
    case 'completed':
      return { status: 'actionable', for: mode, decision: decisionCard(wake.decision, now) };
    case 'activity': {
      const entry = deltaEntry(state, wake.event);
      return {
        status: 'activity',
        for: 'activity',
        event: { seq: wake.event.seq, type: entry?.type ?? wake.event.event_type, who: entry?.who ?? null },
      };
    }
    case 'closed':
      return timeoutBody(state, mode, now);
    case 'over':
      return { status: 'timeout', for: mode, next_poll_at: iso(now), hint: overHint(state, wake.reader) };
  }
}

export function timeoutBody(state: RoomState, mode: WaitMode, now: number): Record<string, unknown> {
  return { status: 'timeout', for: mode, next_poll_at: iso(now), hint: timeoutHint(state, mode) };
}

/**
 * The answer of a my_choice wait that nothing open can end (docs/agents.md, The REST loop): what
 * happened, that waiting the same way is pointless, and the two next steps (the outcome, and the wait
 * for the next decision from the room's head). The protocol's timeout shape carries it, in its hint.
 */
function overHint(state: RoomState, reader: Reader): string {
  const base = `/api/rooms/${state.slug}`;
  const open = openDecisions(state);
  let news: string;
  if (open.length > 0) {
    const why =
      reader.participantId === null
        ? 'you hold no seat in this room'
        : reader.role !== 'participant'
          ? 'you are an observer'
          : 'you are not in their electorate';
    news = `${open.length === 1 ? 'Decision' : 'Decisions'} ${open.map((d) => `#${d.data.seq}`).join(', ')} ${open.length === 1 ? 'is' : 'are'} open, but you cannot choose in ${open.length === 1 ? 'it' : 'them'} (${why}).`;
  } else {
    news = `${lastSealed(state, reader)}No decision is open.`;
  }
  return `${news} Nothing in room ${state.slug} can need your choice now, so this wait answers at once every time: do not repeat it. Read the outcome with GET ${base}/outcome (MCP: outcome). To wait for the next decision, call GET ${base}/next-action?for=activity&since_seq=${state.head} (MCP: wait with since=${state.head}): it wakes when a decision opens or someone else acts.`;
}

/** "Decision #3 sealed without your choice: "x" won. ", or nothing when no sealed decision is at hand. */
function lastSealed(state: RoomState, reader: Reader): string {
  const last = sealedInSealOrder(state).at(-1);
  if (last === undefined) return '';
  const mine = reader.participantId !== null && hasResponded(last, reader.participantId);
  const winner = last.data.seal?.winner;
  const result =
    winner !== null && winner !== undefined
      ? `"${clip(winner, 200)}" won`
      : `no option won (${last.data.seal?.outcome ?? 'no_pass'})`;
  return `Decision #${last.data.seq} sealed ${mine ? 'with' : 'without'} your choice: ${result}. `;
}

function timeoutHint(state: RoomState, mode: WaitMode): string {
  const base = `/api/rooms/${state.slug}`;
  if (state.concluded) {
    return `Room ${state.slug} is closed and read-only: nothing will need you here again. Stop polling it; read the outcome with GET ${base}/outcome.`;
  }
  switch (mode) {
    case 'my_choice':
      return `Nothing needs your choice yet; waiting is the action. Call GET ${base}/next-action again now (MCP: wait).`;
    case 'activity':
      return `Nothing new from others and nothing needs your choice yet; waiting is the action. Call GET ${base}/next-action?for=activity again now with the same since_seq (MCP: wait with since).`;
    case 'completion':
      return `No decision above the watermark has completed yet; waiting is the action. Call GET ${base}/next-action?for=completion again now with the same since_seq (MCP: wait_outcome).`;
  }
}

function decisionCard(d: DecisionState, now: number): Record<string, unknown> {
  const status = decisionStatus(d, now);
  return {
    id: d.data.id,
    seq: d.data.seq,
    question: d.data.question,
    options: d.data.options,
    voting_ends_at: iso(d.data.votingEndsAt),
    status,
    ...(d.data.agreement ? { agreement: true } : {}),
    ...(status === 'resolved'
      ? {
          resolved_outcome: d.data.seal?.outcome ?? null,
          resolved_winner: d.data.seal?.winner ?? null,
          receipt_hash: d.data.receipt?.hash ?? null,
        }
      : {}),
  };
}
