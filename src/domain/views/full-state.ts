/** `?include=full` (docs/agents.md, The REST loop): the complete picture of a room. */
import { satisfiesAuthority } from '../roster.js';
import type { DecisionState, RoomState } from '../state.js';
import type { Message } from '../types.js';
import { inviteView } from './invites.js';
import {
  choicesVisible,
  eligibleVotersOf,
  iso,
  openDecisions,
  type Reader,
  roomStatus,
  sealedInSealOrder,
  choicesCast,
} from './common.js';
import { decisionSummary } from './decision-summary.js';

/** The oldest open decision, or else the most recently sealed one, or else none. */
function activeDecision(state: RoomState): DecisionState | null {
  return openDecisions(state)[0] ?? sealedInSealOrder(state).at(-1) ?? null;
}

/**
 * `discussion` is every message, read from the event log (the live state keeps only the newest);
 * `lastSeen` gives a member's last read (kept outside the room state), shown only with read_receipts.
 */
export function fullState(
  state: RoomState,
  reader: Reader,
  now: number,
  discussion: Message[],
  lastSeen: (participantId: string) => number | null = () => null,
): Record<string, unknown> {
  const { room } = state;
  const active = activeDecision(state);
  const lastSealed = sealedInSealOrder(state).at(-1) ?? null;
  const mayListInvites = reader.actor !== null && satisfiesAuthority(room, reader.actor, room.config.invite_authority);
  return {
    slug: room.slug,
    about: room.about,
    status: roomStatus(state, now),
    config: room.config,
    question: active?.data.question ?? null,
    context: active?.data.context ?? null,
    options: active?.data.options ?? [],
    voting_ends_at: iso(active?.data.votingEndsAt),
    resolved_at: iso(active?.data.seal?.at),
    resolved_outcome: active?.data.seal?.outcome ?? null,
    resolved_winner: active?.data.seal?.winner ?? null,
    resolution_payload: lastSealed?.data.seal?.output ?? null,
    created_at: iso(room.createdAt),
    participant_count: room.members.length,
    eligible_voters: active ? eligibleVotersOf(state, active) : 0,
    vote_count: active ? choicesCast(state, active) : 0,
    active_decision_id: active?.data.id ?? null,
    concluded_at: iso(room.conclusion?.at),
    closing_statement: room.conclusion?.statement ?? null,
    decisions: state.decisions.map((d) => decisionSummary(state, d, now, true)),
    participants: room.members.map((m) => ({
      id: m.id,
      display_name: m.displayName,
      role: m.role,
      joined_at: iso(m.joinedAt),
      last_seen_at: room.config.read_receipts ? iso(lastSeen(m.id)) : null,
      deliberated_at: iso(m.deliberatedAt),
      voted_at: iso(m.votedAt),
      agent_did: m.agentDid,
      // The issuer a mandate seat answers to (docs/architecture.md, Credentials); null for token seats
      // and for mandate seats stored before seats recorded it.
      agent_iss: m.agentIss ?? null,
      mandate_id: m.mandateId,
    })),
    invites: mayListInvites ? room.invites.map((i) => inviteView(i, now)) : [],
    discussion: discussion.map((m) => ({
      id: m.id,
      participant_id: m.participantId,
      body: m.body,
      stance: m.stance,
      posted_at: iso(m.postedAt),
      decision_id: m.decisionId,
    })),
    votes_visible_during: room.config.choice_visibility,
    votes:
      active && choicesVisible(state, active)
        ? active.data.ballots.map((b) => ({
            participant_id: b.participantId,
            choice: b.ballot,
            cast_at: iso(b.castAt),
            rationale: b.rationale,
          }))
        : null,
    abstentions: active
      ? active.data.abstentions.map((a) => ({
          participant_id: a.participantId,
          reason: a.reason,
          declared_at: iso(a.declaredAt),
        }))
      : [],
    current_through: state.head,
  };
}
