/**
 * Plain data of a room and its decisions, as held in the machines' contexts and persisted in
 * snapshots. Times are epoch milliseconds; wire rendering turns them into ISO strings.
 */
import type { CanonicalBallot, EngineOutput, MechanismName, ReceiptStatus } from '../mechanisms/index.js';

export type Role = 'participant' | 'observer';
export type AuthorityKind = 'none' | 'operator' | 'designated' | 'any_participant';

export interface AuthorityConfig {
  kind: AuthorityKind;
  participant_ids?: string[];
}

export type ChoiceVisibility = 'live' | 'after_decided' | 'never';
export type AuthMode = 'token_only' | 'mandate_required' | 'either';

export interface RoomConfig {
  type: 'ephemeral' | 'persistent';
  visibility: 'public' | 'unlisted' | 'private';
  mechanism: MechanismName;
  invite_authority: AuthorityConfig;
  option_proposal_authority: AuthorityConfig;
  decision_opening_authority: AuthorityConfig;
  conclusion_authority: AuthorityConfig;
  auth: AuthMode;
  quorum: number | null;
  voting_window: number;
  deliberation_mode: 'optional' | 'disabled';
  max_participants: number | null;
  max_options: number;
  max_deliberation_messages_per_participant: number;
  max_total_deliberation_messages: number;
  read_receipts: boolean;
  choice_visibility: ChoiceVisibility;
  early_close: boolean;
  settle_window: number;
  creator_votes: boolean;
  max_open_decisions: number;
}

export type JoinVia = 'create' | 'join' | 'invite' | 'mandate';

export interface Member {
  id: string;
  displayName: string;
  role: Role;
  isCreator: boolean;
  joinedAt: number;
  deliberatedAt: number | null;
  votedAt: number | null;
  /** SHA-256 hex of the current token; null for mandate seats. */
  tokenHash: string | null;
  /** Hashes of tokens rotated out by seat recovery, kept for the room's lifetime. */
  supersededHashes: string[];
  agentDid: string | null;
  /**
   * The issuer a mandate seat is bound to (the verified `iss` principal: a did:key or an HTTPS origin);
   * null for token seats. Absent on seats stored before seats recorded it (seat-binding.ts decides those).
   */
  agentIss?: string | null;
  mandateId: string | null;
}

export interface Message {
  id: string;
  participantId: string | null;
  displayName: string;
  body: string;
  stance: Stance | null;
  postedAt: number;
  decisionId: string | null;
  decisionSeq: number | null;
}

export type Stance = 'agree' | 'disagree' | 'clarify' | 'extend';

/** Who performs an act, as the machines see it. */
export interface Actor {
  participantId: string | null;
  displayName: string;
  /** Receipt attribution: mandate sub, or `participant:<id>`, or `operator`. */
  agentId: string;
  mandateRef: string | null;
  /** The verified issuer of a mandate act, recorded beside the sub in receipts (`agent_iss`). */
  agentIss?: string | null;
  isOperator: boolean;
  isAdmin: boolean;
}

export interface BallotRecord {
  participantId: string;
  agentId: string;
  mandateRef: string | null;
  /** Set on mandate-cast ballots only (ballots stored earlier have none). */
  agentIss?: string;
  ballot: CanonicalBallot;
  castAt: number;
  rationale: string | null;
}

export interface AbstentionRecord {
  participantId: string;
  agentId: string;
  /** Set on mandate abstentions only. */
  agentIss?: string;
  reason: string;
  declaredAt: number;
}

export interface SettlingState {
  endsAt: number;
  determinedAt: number;
  presumptive: string | null;
}

export interface SealRecord {
  at: number;
  votingEndedAt: number;
  mechanism: MechanismName;
  parameters: Record<string, unknown>;
  output: EngineOutput | null;
  status: ReceiptStatus;
  /** Engine vocabulary; `no_pass` when the receipt status was forced to no_quorum. */
  outcome: 'pass' | 'plurality_pass' | 'no_pass' | 'tied';
  winner: string | null;
  tallies: Record<string, number>;
  castVotes: number;
  eligibleVoters: number;
  votes: BallotRecord[];
  abstentions: AbstentionRecord[];
}

export interface ReceiptLink {
  sequence: number;
  hash: string;
  prevHash: string | null;
}

export interface DecisionData {
  id: string;
  seq: number;
  question: string;
  context: string | null;
  options: string[];
  /** Aligned with options: proposer participant id, or null for options seeded by the opener. */
  optionProposers: (string | null)[];
  eligibleIds: string[] | null;
  openedAt: number;
  openedBy: { participantId: string | null; displayName: string };
  votingOpensAt: number | null;
  votingEndsAt: number;
  votingWindow: number;
  /** When choices actually opened (opening time for fluid decisions). */
  votingStartedAt: number | null;
  agreement: boolean;
  ballots: BallotRecord[];
  abstentions: AbstentionRecord[];
  settling: SettlingState | null;
  restarts: number;
  everDetermined: boolean;
  seal: SealRecord | null;
  receipt: ReceiptLink | null;
}

export type DecisionPhase = 'proposing' | 'voting' | 'settling' | 'sealed' | 'resolved';

/** Facts about the room a decision needs to judge an act; computed by the room for each event. */
export interface DecisionFacts {
  mechanism: MechanismName;
  quorum: number | null;
  earlyClose: boolean;
  settleWindowSeconds: number;
  /** Ids of the members eligible on this decision right now. */
  electorate: string[];
  /** True while pending expected participant invites hold back early close. */
  rosterGate: boolean;
  maxOptions: number;
  slug: string;
  proposalAuthorityNone: boolean;
}

export interface ConclusionRecord {
  at: number;
  statement: string | null;
  concludedBy: string;
  byParticipantId: string | null;
  receipt: ReceiptLink | null;
}

export interface InviteRecord {
  code: string;
  label: string;
  role: Role;
  expected: boolean;
  tokenHash: string;
  binding: { kind: 'token' | 'principal' | 'account'; value: string | null };
  createdAt: number;
  expiresAt: number | null;
  acceptedAt: number | null;
  acceptedParticipantId: string | null;
  revokedAt: number | null;
}

/** Messages posted for one decision while it is open: all of them, and per participant. */
export interface SpeechCount {
  total: number;
  byParticipant: Record<string, number>;
}

/**
 * The discussion as live state: counters for the caps and receipts, the newest messages for the
 * agent view. Bounded whatever the room's history; every message is in the event log
 * (`discussion.posted`), where full reads find it.
 */
export interface Speech {
  /** Messages ever posted in the room (the conclusion receipt's count). */
  total: number;
  /** The newest messages, oldest first (at most RECENT_MESSAGES). */
  recent: Message[];
  /** Per open decision, until its receipt is signed. */
  byDecision: Record<string, SpeechCount>;
  /** Room-scoped messages of the last 24 hours (their caps), oldest first. */
  roomScoped: { participantId: string | null; postedAt: number }[];
}

export interface RoomData {
  slug: string;
  createdAt: number;
  about: string | null;
  config: RoomConfig;
  passwordHash: string | null;
  ownerPrincipalId: string | null;
  members: Member[];
  invites: InviteRecord[];
  /** What the machines and the agent view need of the discussion; the messages live in the event log. */
  speech: Speech;
  /** Decision ids in seq order. */
  decisionIds: string[];
  /** Ids of open (proposing/voting) decisions, oldest first. */
  openDecisionIds: string[];
  /** Sealed decision ids in seal order. */
  sealOrder: string[];
  chain: { head: string | null; length: number };
  conclusion: ConclusionRecord | null;
  /** Invite expiries up to this instant have been applied to the roster gate. */
  rosterCheckedAt: number;
}

export interface EventDraft {
  event_type: string;
  occurred_at: number;
  decision_id: string | null;
  data: Record<string, unknown>;
  actor: string | null;
}
