/**
 * Pure rules of room-level acts: decision selection, the open-decision cap, opening a decision and
 * discussion caps (docs/concepts.md, Decisions and slates), admission and seats (docs/concepts.md,
 * Rooms). The room machine calls these.
 */
import { invalidInput, protocolError, type ProtocolError } from '../errors.js';
import { slateTextError } from './config.js';
import { duplicateOptions } from './shown-text.js';
import { decisionElectorate, memberById, rosterGateOpen, roomElectorate } from './roster.js';
import type { Actor, DecisionData, DecisionFacts, Message, RoomData, Speech, Stance } from './types.js';

/** How to wait for the next decision once the one acted on has sealed (docs/agents.md, The REST loop). */
const NEXT_DECISION = (slug: string): string =>
  `To wait for the next decision: GET /api/rooms/${slug}/next-action?for=activity&since_seq=<current_through of your last read> (MCP: wait with since).`;

export interface DecisionIndexEntry {
  id: string;
  seq: number;
  question: string;
  eligibleIds: string[] | null;
}

export type RoomContext = RoomData & { decisions: DecisionIndexEntry[] };

export function openDecisionList(room: RoomContext): { seq: number; question: string }[] {
  return room.openDecisionIds.map((id) => {
    const d = room.decisions.find((x) => x.id === id)!;
    return { seq: d.seq, question: d.question };
  });
}

function describeOpen(room: RoomContext): string {
  const open = openDecisionList(room);
  return open.length === 0 ? 'none' : open.map((d) => `${d.seq} ("${d.question}")`).join(', ');
}

/**
 * docs/concepts.md, Decisions and slates: an explicit seq must name a decision (404) that is still open (400); no selector means the
 * oldest open decision (400 when none is open, unless `allowNone`).
 */
export function selectDecision(
  room: RoomContext,
  seq: number | undefined,
  action: string,
  route: string,
  allowNone = false,
): DecisionIndexEntry | null | ProtocolError {
  if (seq !== undefined) {
    const entry = room.decisions.find((d) => d.seq === seq);
    if (!entry) {
      const open = openDecisionList(room);
      return protocolError(
        'decision.not_found',
        `Decision ${seq} does not exist in room ${room.slug}. Open decisions: ${describeOpen(room)}. Target one with decision: <seq> (the ${action} action / ${route}).`,
        {
          hint:
            open.length > 0
              ? `Send decision: ${open.map((d) => d.seq).join(' or decision: ')}, or omit decision to target the oldest open decision.`
              : 'No decision is open; read the room to see what happened.',
          details: { open_decisions: open },
        },
      );
    }
    if (!room.openDecisionIds.includes(entry.id)) {
      return protocolError(
        'decision.not_open',
        `Decision ${seq} is no longer open (it has been resolved). Open decisions: ${describeOpen(room)}. (the ${action} action / ${route})`,
        {
          hint: `Read its outcome (GET /api/rooms/${room.slug}/outcome; MCP: outcome), or target an open decision. ${NEXT_DECISION(room.slug)}`,
          details: { seq, open_decisions: openDecisionList(room) },
        },
      );
    }
    return entry;
  }
  const oldest = room.openDecisionIds[0];
  if (oldest === undefined) {
    if (allowNone) return null;
    return protocolError(
      'decision.not_open',
      `No decision is open in room ${room.slug}, so there is nothing to ${action === 'propose' ? 'propose an option for' : action}. (the ${action} action / ${route})`,
      {
        hint: `If one just sealed, read its outcome (GET /api/rooms/${room.slug}/outcome; MCP: outcome). ${NEXT_DECISION(room.slug)} Or open one with the ask action.`,
        details: { open_decisions: [] },
      },
    );
  }
  return room.decisions.find((d) => d.id === oldest)!;
}

export function factsFor(room: RoomContext, entry: Pick<DecisionData, 'eligibleIds'>, now: number): DecisionFacts {
  return {
    mechanism: room.config.mechanism,
    quorum: room.config.quorum,
    earlyClose: room.config.early_close,
    settleWindowSeconds: room.config.settle_window,
    electorate: decisionElectorate(room, entry),
    rosterGate: rosterGateOpen(room, now),
    maxOptions: room.config.max_options,
    slug: room.slug,
    proposalAuthorityNone: room.config.option_proposal_authority.kind === 'none',
  };
}

export function alreadyOpenError(room: RoomContext): ProtocolError {
  return protocolError(
    'decision.already_open',
    `Room ${room.slug} already has ${room.openDecisionIds.length} open decision(s), its max_open_decisions (${room.config.max_open_decisions}): ${describeOpen(room)}. Choose on the open decision(s), wait for the window to close, or ask the operator to raise max_open_decisions (PATCH /api/rooms/${room.slug}/settings).`,
    {
      hint: 'Resolve or wait out an open decision before asking another question.',
      details: { max_open_decisions: room.config.max_open_decisions, open_decisions: openDecisionList(room) },
    },
  );
}

export interface AskInput {
  question: string;
  context?: string | null | undefined;
  options?: string[] | undefined;
  eligible?: string[] | undefined;
  eligible_participant_ids?: string[] | undefined;
  voting_window?: number | undefined;
  proposal_window?: number | undefined;
  agreement?: boolean | undefined;
}

/** Field rules of `ask` that depend on the room (docs/concepts.md, Decisions and slates); returns the explicit electorate. */
export function validateAsk(room: RoomContext, input: AskInput): string[] | null | ProtocolError {
  const route = `the ask action / POST /api/rooms/${room.slug}/ask`;
  const options = input.options ?? [];
  const dup = duplicateOptions(options, route);
  if (dup) return dup;
  const minOptions = room.config.option_proposal_authority.kind === 'none' ? 2 : 0;
  if (options.length < minOptions || options.length > room.config.max_options) {
    return invalidInput(
      'options',
      `This room needs ${minOptions}..${room.config.max_options} options on ask${minOptions === 2 ? ' because nobody may propose options later' : ''} (${route}).`,
      'out_of_range',
    );
  }
  const slateError = slateTextError(options, 'options', route);
  if (slateError) return slateError;
  if (input.agreement === true && !['simple_majority', 'supermajority'].includes(room.config.mechanism)) {
    return invalidInput(
      'agreement',
      `Agreement decisions are only available in simple_majority or supermajority rooms; this room uses ${room.config.mechanism} (${route}).`,
      'agreement_not_supported',
    );
  }
  if (input.eligible !== undefined && input.eligible_participant_ids !== undefined) {
    return invalidInput(
      'eligible',
      `Send either eligible or eligible_participant_ids, not both (${route}).`,
      'invalid_value',
    );
  }
  const names = input.eligible;
  const ids = input.eligible_participant_ids;
  if (names === undefined && ids === undefined) return null;
  const list = (names ?? ids)!;
  const field = names !== undefined ? 'eligible' : 'eligible_participant_ids';
  if (list.length === 0) return invalidInput(field, `${field} must not be empty (${route}).`, 'invalid_value');
  const electorate = new Set(roomElectorate(room));
  const resolved: string[] = [];
  for (const entry of list) {
    const member = names !== undefined ? room.members.find((m) => m.displayName === entry) : memberById(room, entry);
    if (member?.role !== 'participant') {
      return invalidInput(
        field,
        `"${entry}" in ${field} is not a current participant of this room (${route}).`,
        'invalid_value',
      );
    }
    if (!electorate.has(member.id)) {
      return invalidInput(
        field,
        `"${entry}" cannot be in the electorate: the creator does not vote in this room (creator_votes is false) (${route}).`,
        'invalid_value',
      );
    }
    if (!resolved.includes(member.id)) resolved.push(member.id);
  }
  return resolved;
}

const DAY_MS = 24 * 3600 * 1000;
/** How many of the newest messages the room keeps in its live state (the agent view shows 20). */
export const RECENT_MESSAGES = 20;

export const emptySpeech = (): Speech => ({ total: 0, recent: [], byDecision: {}, roomScoped: [] });

/** Messages that count against a cap: posted for this decision, or room-scoped in the last 24 hours. */
function speechCounts(room: RoomContext, participantId: string | null, decisionId: string | null, now: number) {
  if (decisionId === null) {
    const recent = room.speech.roomScoped.filter((m) => m.postedAt > now - DAY_MS);
    return { scoped: recent.length, mine: recent.filter((m) => m.participantId === participantId).length };
  }
  const count = room.speech.byDecision[decisionId];
  return { scoped: count?.total ?? 0, mine: count?.byParticipant[participantId ?? ''] ?? 0 };
}

/** The speech after `message` was posted at `now`. */
export function withMessage(speech: Speech, message: Message, now: number): Speech {
  const next: Speech = {
    total: speech.total + 1,
    recent: [...speech.recent.slice(1 - RECENT_MESSAGES), message],
    byDecision: speech.byDecision,
    roomScoped: speech.roomScoped,
  };
  if (message.decisionId === null) {
    next.roomScoped = [
      ...speech.roomScoped.filter((m) => m.postedAt > now - DAY_MS),
      { participantId: message.participantId, postedAt: message.postedAt },
    ];
  } else {
    const count = speech.byDecision[message.decisionId] ?? { total: 0, byParticipant: {} };
    const who = message.participantId ?? '';
    next.byDecision = {
      ...speech.byDecision,
      [message.decisionId]: {
        total: count.total + 1,
        byParticipant: { ...count.byParticipant, [who]: (count.byParticipant[who] ?? 0) + 1 },
      },
    };
  }
  return next;
}

/** Forgets a decision's counts once its receipt (which carries the count) is signed. */
export function withoutDecision(speech: Speech, decisionId: string): Speech {
  if (!(decisionId in speech.byDecision)) return speech;
  const { [decisionId]: _sealed, ...open } = speech.byDecision;
  return { ...speech, byDecision: open };
}

/** Messages posted for a decision so far (its receipt's deliberation_message_count). */
export function messagesFor(speech: Speech, decisionId: string): number {
  return speech.byDecision[decisionId]?.total ?? 0;
}

export function discussionCapError(
  room: RoomContext,
  actor: Actor,
  decisionId: string | null,
  now: number,
): ProtocolError | null {
  const counts = speechCounts(room, actor.participantId, decisionId, now);
  const perParticipant = room.config.max_deliberation_messages_per_participant;
  const total = room.config.max_total_deliberation_messages;
  const scope = decisionId === null ? 'room-scoped speech in the last 24 hours' : 'this decision';
  const frees = decisionId === null ? ' Room-scoped caps free up as messages age past 24 hours.' : '';
  if (counts.mine >= perParticipant) {
    return invalidInput(
      'body',
      `You have reached the cap of ${perParticipant} messages for ${scope}.${frees} (the discuss action / POST /api/rooms/${room.slug}/discuss)`,
      'message_cap_reached',
      { cap: perParticipant },
    );
  }
  if (counts.scoped >= total) {
    return invalidInput(
      'body',
      `The room has reached its cap of ${total} messages for ${scope}.${frees} (the discuss action / POST /api/rooms/${room.slug}/discuss)`,
      'message_cap_reached',
      { cap: total },
    );
  }
  return null;
}

export function newMessage(
  id: string,
  actor: Actor,
  body: string,
  stance: Stance | null,
  entry: DecisionIndexEntry | null,
  now: number,
): Message {
  return {
    id,
    participantId: actor.participantId,
    displayName: actor.displayName,
    body,
    stance,
    postedAt: now,
    decisionId: entry?.id ?? null,
    decisionSeq: entry?.seq ?? null,
  };
}
