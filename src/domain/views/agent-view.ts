/**
 * The agent view (docs/agents.md, The REST loop): constant-size, keyed by display names, written to be pasted
 * into an agent's context. The `agent`, `brief` and `rules.how_to_choose` wording is fixed.
 */
import { howToChoose, ballotText, singleChoiceNumber } from '../ballots.js';
import { countedAbstentions, countedBallots } from '../determination.js';
import { inviteStatus } from '../roster.js';
import type { DecisionState, RoomState } from '../state.js';
import {
  choicesCast,
  choicesVisible,
  clip,
  decisionStatus,
  displayName,
  electorateOf,
  eligibleVotersOf,
  hasResponded,
  humanDuration,
  iso,
  mayBeAsked,
  mayOpenDecision,
  mayPropose,
  openDecisions,
  owesChoice,
  proposalsOpen,
  type Reader,
  roomStatus,
  secondsUntil,
  sealedInSealOrder,
} from './common.js';
import { optionProposerNames } from './decision-summary.js';

export const AGENT_SENTENCE =
  'This is a Conclave agent-coordination room. Read brief for the situation, act with the verbs listed in more, and call wait (GET next-action) whenever nothing needs you.';

export function agentView(state: RoomState, reader: Reader, now: number): Record<string, unknown> {
  const open = openDecisions(state);
  const oldest = open[0] ?? null;
  const view: Record<string, unknown> = {
    slug: state.slug,
    status: roomStatus(state, now),
    about: state.room.about,
    role: reader.role,
    agent: AGENT_SENTENCE,
    brief: brief(state, reader, now),
    current_through: state.head,
    decision: oldest ? decisionObject(state, oldest, reader, now) : null,
  };
  if (open.length > 1) view.decisions_open = open.map((d) => openRow(state, d, reader, now));
  const { speech } = state.room;
  view.discussion = speech.recent.slice(-20).map((m) => ({
    who: m.displayName,
    said: clip(m.body, 2000),
    ...(m.stance !== null ? { stance: m.stance } : {}),
    at: iso(m.postedAt),
    ...(m.decisionSeq !== null ? { decision: m.decisionSeq } : {}),
  }));
  if (speech.total > 20) view.discussion_earlier = speech.total - 20;
  view.roster = roster(state, oldest, now);
  const sealed = sealedInSealOrder(state);
  view.decided = sealed.slice(-5).map((d) => ({
    seq: d.data.seq,
    question: d.data.question,
    ...(d.data.seal?.winner != null ? { winner: d.data.seal.winner } : {}),
    outcome: d.data.seal?.status,
    receipt: d.data.receipt?.hash ?? null,
  }));
  if (sealed.length > 5) view.decided_earlier = sealed.length - 5;
  view.choices = oldest && choicesVisible(state, oldest) ? choiceRows(state, oldest) : null;
  if (oldest) {
    const abstentions = countedAbstentions(oldest.data, electorateOf(state, oldest));
    if (abstentions.length > 0) {
      view.abstentions = abstentions.map((a) => ({
        who: displayName(state, a.participantId),
        reason: a.reason,
        at: iso(a.declaredAt),
      }));
    }
  }
  view.rules = rules(state, oldest, reader);
  view.more = more(state, oldest, reader);
  return view;
}

function brief(state: RoomState, reader: Reader, now: number): string {
  if (state.concluded) {
    const statement = state.room.conclusion?.statement;
    return `Room closed: this room is read-only.${statement ? ` Closing statement: "${statement}".` : ''}`;
  }
  const oldest = openDecisions(state)[0];
  if (oldest) {
    const phase = oldest.phase === 'proposing' ? 'proposing' : oldest.phase === 'settling' ? 'settling' : 'choosing';
    const closes = humanDuration(secondsUntil(oldest.data.votingEndsAt, now));
    const owes = owesChoice(state, oldest, reader) ? ' You have not chosen yet.' : '';
    return `Deciding now: "${oldest.data.question}" (decision ${oldest.data.seq}, ${phase}) — ${choicesCast(state, oldest)} of ${eligibleVotersOf(state, oldest)} have chosen; closes in ${closes}.${owes}`;
  }
  const last = sealedInSealOrder(state).at(-1);
  if (last?.data.seal) {
    const seal = last.data.seal;
    const result = seal.winner !== null ? seal.winner : `no winner (${seal.status})`;
    return `Last decided: "${last.data.question}" → ${result}. No decision is open.`;
  }
  return `No decision is open yet.${state.room.about ? ` ${state.room.about}` : ''}`;
}

function decisionObject(state: RoomState, d: DecisionState, reader: Reader, now: number): Record<string, unknown> {
  const data = d.data;
  const observer = reader.role !== 'participant';
  const proposers = optionProposerNames(state, d);
  const object: Record<string, unknown> = {
    seq: data.seq,
    question: data.question,
    context: data.context,
    options: data.options.map((o) => clip(o, 1000)),
  };
  if (proposers.some((p) => p !== null)) object.option_proposers = proposers;
  object.status = decisionStatus(d, now);
  if (data.agreement) object.agreement = true;
  if (!observer) {
    object.can_propose_more =
      mayPropose(state, reader) && proposalsOpen(state, d) && data.options.length < state.room.config.max_options;
    object.can_start_choosing = d.phase === 'proposing' && data.options.length > 0 && mayOpenDecision(state, reader);
  }
  if (d.phase === 'proposing' && data.votingOpensAt !== null) {
    object.proposals_close_at = iso(data.votingOpensAt);
    object.seconds_until_voting = secondsUntil(data.votingOpensAt, now);
  }
  object.closes_at = iso(data.votingEndsAt);
  object.seconds_left = secondsUntil(data.votingEndsAt, now);
  object.choices_cast = choicesCast(state, d);
  object.eligible_voters = eligibleVotersOf(state, d);
  object.eligible = data.eligibleIds === null ? null : data.eligibleIds.map((id) => displayName(state, id));
  object.eligible_participant_ids = data.eligibleIds;
  if (d.phase === 'settling' && data.settling) {
    object.settling = {
      seals_in_seconds: secondsUntil(data.settling.endsAt, now),
      presumptive: data.settling.presumptive,
    };
  }
  return object;
}

function openRow(state: RoomState, d: DecisionState, reader: Reader, now: number): Record<string, unknown> {
  return {
    seq: d.data.seq,
    question: clip(d.data.question, 200),
    status: decisionStatus(d, now),
    ...(d.data.agreement ? { agreement: true } : {}),
    options: d.data.options.length,
    choices_cast: choicesCast(state, d),
    closes_at: iso(d.data.votingEndsAt),
    seconds_left: secondsUntil(d.data.votingEndsAt, now),
    ...(owesChoice(state, d, reader) ? { needs_you: true } : {}),
  };
}

function roster(state: RoomState, oldest: DecisionState | null, now: number): Record<string, unknown> {
  const { room } = state;
  const joined = room.members
    .filter((m) => m.role === 'participant')
    .map((m) => ({
      name: m.displayName,
      role: 'participant',
      ...(m.isCreator && !room.config.creator_votes ? { room_role: 'non_voting_host', voting_eligible: false } : {}),
    }));
  const observers = room.members.filter((m) => m.role === 'observer').length;
  const expectedInvites = room.invites.filter((i) => i.expected);
  const waiting: string[] = [];
  if (oldest) {
    for (const id of electorateOf(state, oldest)) {
      if (!hasResponded(oldest, id)) waiting.push(displayName(state, id));
    }
    for (const invite of expectedInvites) {
      if (invite.role === 'participant' && inviteStatus(invite, now) === 'pending') waiting.push(invite.label);
    }
  }
  return {
    joined,
    ...(observers > 0 ? { observers } : {}),
    expected: expectedInvites.map((i) => ({ name: i.label, role: i.role, status: inviteStatus(i, now) })),
    waiting_for: waiting,
  };
}

export function choiceRows(state: RoomState, d: DecisionState): Record<string, unknown>[] {
  return countedBallots(d.data, electorateOf(state, d)).map((b) => {
    const number = singleChoiceNumber(d.data.options, b.ballot);
    return {
      who: displayName(state, b.participantId),
      option: number,
      choice: ballotText(b.ballot),
      at: iso(b.castAt),
    };
  });
}

function rules(state: RoomState, oldest: DecisionState | null, reader: Reader): Record<string, unknown> {
  const config = state.room.config;
  return {
    how_to_choose: howToChoose(config.mechanism, oldest?.data.agreement ?? false),
    ...(reader.role === 'participant' ? { can_propose: mayPropose(state, reader) } : {}),
    choices_lock: config.early_close ? 'when_determined' : 'at_close',
    choices_visible: config.choice_visibility,
  };
}

function more(state: RoomState, oldest: DecisionState | null, reader: Reader): Record<string, string> {
  const slug = state.slug;
  const base = `/api/rooms/${slug}`;
  const lines: Record<string, string> = {
    history: `Replay the room's events: GET ${base}/events?since_seq=<n> (MCP: list_events).`,
    config: `Read the full state and config: GET ${base}?include=full (MCP: read_room with include "full").`,
    wait:
      state.decisions.length > 0 && !state.concluded && !mayBeAsked(state, reader)
        ? `No open decision can need your choice: wait for the next one with GET ${base}/next-action?for=activity&since_seq=${state.head} (MCP: wait with since=${state.head}).`
        : `When nothing needs you, wait: GET ${base}/next-action?wait=25 (MCP: wait).`,
    outcome: `Read decisions and signed receipts: GET ${base}/outcome (MCP: outcome).`,
  };
  if (state.concluded || reader.role !== 'participant') return lines;
  const sealedAny = state.room.sealOrder.length > 0;
  const canAskNow =
    mayOpenDecision(state, reader) &&
    state.room.openDecisionIds.length < state.room.config.max_open_decisions &&
    (state.room.config.type === 'persistent' || !sealedAny);
  if (canAskNow) lines.ask = `Open a decision: POST ${base}/ask with {"question": "...", "options": [...]} (MCP: ask).`;
  if (oldest && oldest.phase === 'proposing' && oldest.data.options.length > 0 && mayOpenDecision(state, reader)) {
    lines.start_choosing = `Freeze the slate and open choices: POST ${base}/start-choosing (MCP: start_choosing).`;
  }
  if (
    oldest &&
    (oldest.phase === 'voting' || oldest.phase === 'settling') &&
    !oldest.data.agreement &&
    reader.participantId !== null &&
    electorateOf(state, oldest).includes(reader.participantId)
  ) {
    lines.abstain = `Abstain with a reason: POST ${base}/abstain with {"reason": "..."} (MCP: abstain).`;
  }
  return lines;
}
