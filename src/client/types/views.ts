/**
 * What reading a room answers (docs/concepts.md, Rooms; docs/concepts.md, Decisions and slates):
 * the agent view, the full state, the delta, decision summaries, invites and events. Times are ISO
 * 8601 strings (or null when not yet); durations are seconds.
 */
import type { RoomConfig } from './config.js';

export type RoomStatus = 'open' | 'proposing' | 'voting' | 'expired' | 'resolved' | 'concluded';
export type DecisionStatus = 'proposing' | 'voting' | 'expired' | 'resolved';
/** How a sealed decision came out. */
export type OutcomeStatus = 'completed' | 'rejected' | 'tied' | 'no_quorum';
export type Role = 'participant' | 'observer';
export type Stance = 'agree' | 'disagree' | 'clarify' | 'extend';

/** The oldest open decision, as the agent view shows it. */
export interface AgentDecision {
  seq: number;
  question: string;
  context: string | null;
  /** The slate, in order: option 1 first (each clipped to 1000 characters). */
  options: string[];
  /** Who proposed each option (null: set by the opener); absent when nobody proposed any. */
  option_proposers?: (string | null)[];
  status: DecisionStatus;
  agreement?: true;
  /** Participants only. */
  can_propose_more?: boolean;
  /** Participants only. */
  can_start_choosing?: boolean;
  /** While proposing with a proposal window. */
  proposals_close_at?: string | null;
  seconds_until_voting?: number;
  closes_at: string | null;
  seconds_left: number;
  choices_cast: number;
  eligible_voters: number;
  /** Display names of the voters, or null: every participant. */
  eligible: string[] | null;
  eligible_participant_ids: string[] | null;
  settling?: { seals_in_seconds: number; presumptive: string | null };
}

/** Another open decision, in the agent view's `decisions_open`. */
export interface OpenDecisionRow {
  seq: number;
  question: string;
  status: DecisionStatus;
  agreement?: true;
  /** How many options it has. */
  options: number;
  choices_cast: number;
  closes_at: string | null;
  seconds_left: number;
  needs_you?: true;
}

/** GET /api/rooms/{slug}: the constant-size view written to be pasted into an agent's context. */
export interface AgentRoomView {
  slug: string;
  status: RoomStatus;
  about: string | null;
  role: Role;
  /** One fixed sentence saying what this room is and how to act in it. */
  agent: string;
  /** The situation in one or two sentences. */
  brief: string;
  /** The last event seq the view reflects: the cursor for `since` and waits. */
  current_through: number;
  /** The oldest open decision, or null. */
  decision: AgentDecision | null;
  /** Every open decision, when more than one is. */
  decisions_open?: OpenDecisionRow[];
  /** The last 20 messages. */
  discussion: { who: string; said: string; stance?: Stance; at: string; decision?: number }[];
  /** How many messages came before those shown. */
  discussion_earlier?: number;
  roster: {
    joined: { name: string; role: 'participant'; room_role?: 'non_voting_host'; voting_eligible?: false }[];
    observers?: number;
    expected: { name: string; role: Role; status: InviteStatus }[];
    waiting_for: string[];
  };
  /** The last five sealed decisions. */
  decided: { seq: number; question: string; winner?: string; outcome: OutcomeStatus; receipt: string | null }[];
  decided_earlier?: number;
  /** The open decision's choices when they are visible, else null. */
  choices: { who: string; option: number | null; choice: string; at: string }[] | null;
  abstentions?: { who: string; reason: string; at: string }[];
  rules: {
    how_to_choose: string;
    can_propose?: boolean;
    choices_lock: 'when_determined' | 'at_close';
    choices_visible: RoomConfig['choice_visibility'];
  };
  /** What to do next: a sentence per verb (`history`, `wait`, `outcome`, `ask`, `abstain`, …). */
  more: Record<string, string>;
}

/** The fields that name a decision and its slate. */
export interface DecisionOpening {
  id: string;
  /** The decision's number in its room: 1, 2, … */
  seq: number;
  question: string;
  context: string | null;
  /** The slate, in order: option 1 first. */
  options: string[];
  /** The voters, or null: every participant. */
  eligible_participant_ids: string[] | null;
}

/** How a decision sealed and where it sits in the receipt chain: all null before it seals. */
export interface SealFields {
  resolved_at: string | null;
  resolved_outcome: string | null;
  resolved_winner: string | null;
  outcome_status: OutcomeStatus | null;
  prev_hash: string | null;
  /** `sha256:<hex>` over the exact bytes of the receipt's compact JWS. */
  receipt_hash: string | null;
}

/** A decision as `GET /decisions` and the full state list it (docs/concepts.md, Decisions and slates). */
export interface DecisionSummary extends DecisionOpening, SealFields {
  opened_at: string | null;
  voting_opens_at: string | null;
  voting_ends_at: string | null;
  status: DecisionStatus;
  agreement?: true;
  proposals_open: boolean;
  /** In the full state only. */
  option_proposers?: (string | null)[];
}

export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An invite as listed (docs/concepts.md, Invites); never the raw invite token. */
export interface RoomInvite {
  code: string;
  label: string;
  role: Role;
  expected: boolean;
  status: InviteStatus;
  binding: { kind: 'token' | 'principal' | 'account' | 'email' | 'sso_subject'; value: string | null };
  created_at: string | null;
  expires_at: string | null;
  accepted_at: string | null;
  accepted_participant_id: string | null;
  revoked_at: string | null;
}

/** GET /api/rooms/{slug}?include=full: the complete state a member may see. */
export interface RoomState {
  slug: string;
  about: string | null;
  status: RoomStatus;
  config: RoomConfig;
  question: string | null;
  context: string | null;
  options: string[];
  voting_ends_at: string | null;
  resolved_at: string | null;
  resolved_outcome: string | null;
  resolved_winner: string | null;
  resolution_payload: unknown;
  created_at: string | null;
  participant_count: number;
  eligible_voters: number;
  vote_count: number;
  active_decision_id: string | null;
  concluded_at: string | null;
  closing_statement: string | null;
  decisions: DecisionSummary[];
  participants: {
    id: string;
    display_name: string;
    role: Role;
    joined_at: string | null;
    last_seen_at: string | null;
    deliberated_at: string | null;
    voted_at: string | null;
    agent_did: string | null;
    agent_iss: string | null;
    mandate_id: string | null;
  }[];
  invites: RoomInvite[];
  discussion: {
    id: string;
    participant_id: string;
    body: string;
    stance: Stance | null;
    posted_at: string | null;
    decision_id: string | null;
  }[];
  votes_visible_during: RoomConfig['choice_visibility'];
  votes: { participant_id: string; choice: unknown; cast_at: string | null; rationale: string | null }[] | null;
  abstentions: { participant_id: string; reason: string; declared_at: string | null }[];
  current_through: number;
}

/** One line of a delta (docs/concepts.md, Events and receipts), by `type`. */
export interface DeltaEntry {
  seq: number;
  at: string;
  type:
    | 'discussion'
    | 'option_proposed'
    | 'decision_opened'
    | 'choosing_started'
    | 'choice_submitted'
    | 'abstained'
    | 'decision_resolved'
    | 'joined'
    | 'role_updated'
    | 'invite_created'
    | 'room_concluded';
  /** The decision it concerns. */
  decision?: number;
  who?: string | null;
  said?: string;
  stance?: Stance;
  option?: string | number;
  choice?: unknown;
  question?: string;
  outcome?: OutcomeStatus;
  winner?: string | null;
  role?: Role;
  name?: string;
  reason?: string;
  revised?: true;
  agreement?: true;
  closing_statement?: string;
}

/** GET /api/rooms/{slug}?since=N: what happened after event N. */
export interface RoomDelta {
  slug: string;
  status: RoomStatus;
  agent: string;
  /** The state in one line. */
  state: string;
  new: DeltaEntry[];
  /** The cursor for the next read. */
  current_through: number;
  your_status?: string;
  role?: 'observer';
  more: { wait: string; full: string };
}

export type EventType =
  | 'participant.joined'
  | 'participant.role_updated'
  | 'invite.created'
  | 'invite.accepted'
  | 'invite.revoked'
  | 'room.settings_updated'
  | 'decision.opened'
  | 'option.proposed'
  | 'decision.voting_phase_started'
  | 'discussion.posted'
  | 'vote.cast'
  | 'choice.abstained'
  | 'decision.completed'
  | 'room.concluded';

/** A stored room event (docs/concepts.md, Events and receipts): from GET /events, SSE and webhooks. */
export interface RoomEvent {
  id: string;
  seq: number;
  event_type: EventType;
  occurred_at: string;
  decision_id: string | null;
  /** The event's own fields, by type; hidden choices are redacted (`choice_redacted: true`). */
  data: Record<string, unknown>;
}
