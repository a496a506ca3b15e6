/**
 * RoomConfig on the wire (docs/configuration.md): every key, its unit and its default. Closed: a key that is
 * not listed here is refused by the service (`input.invalid`, `unknown_keys`), so it fails to compile.
 */

/** The voting mechanisms the service runs (docs/mechanisms.md). */
export type Mechanism =
  | 'simple_majority'
  | 'supermajority'
  | 'plurality'
  | 'approval'
  | 'ranked_choice'
  | 'ranked_pairwise'
  | 'score_vote'
  | 'quadratic_vote';

/** Who may do one kind of act in a room. */
export interface AuthorityConfig {
  kind: 'none' | 'operator' | 'designated' | 'any_participant';
  /** With `designated`: the participant ids allowed. */
  participant_ids?: string[];
}

/** A room's configuration as the service reports it: every key resolved. */
export interface RoomConfig {
  /** `ephemeral` (one decision) or `persistent` (many). Default `ephemeral`; immutable. */
  type: 'ephemeral' | 'persistent';
  /** Default `unlisted`; a password makes a room `private`. Immutable. */
  visibility: 'public' | 'unlisted' | 'private';
  /** Default `simple_majority`; immutable. */
  mechanism: Mechanism;
  /** Default `{kind: 'operator'}`. */
  invite_authority: AuthorityConfig;
  /** Default `{kind: 'any_participant'}`. */
  option_proposal_authority: AuthorityConfig;
  /** Default `{kind: 'any_participant'}`. */
  decision_opening_authority: AuthorityConfig;
  /** Default `{kind: 'operator'}`. */
  conclusion_authority: AuthorityConfig;
  /** Which credentials the room accepts. Default `either`. */
  auth: 'token_only' | 'mandate_required' | 'either';
  /** Minimum number of eligible voters counted, 1..1 000 000, or null (none). Default null. */
  quorum: number | null;
  /** Seconds a decision stays open for choices, 60..1 209 600. Default 3600. */
  voting_window: number;
  /** Default `optional`. */
  deliberation_mode: 'optional' | 'disabled';
  /** Seats, 1..1 000 000, or null (unbounded). Default null. */
  max_participants: number | null;
  /** Options per decision, 2..500. Default 100. */
  max_options: number;
  /** Messages one participant may post, 1..500. Default 200. */
  max_deliberation_messages_per_participant: number;
  /** Messages the room holds, 1..5000. Default 500. */
  max_total_deliberation_messages: number;
  /** Record when each member last read. Default false. */
  read_receipts: boolean;
  /** When others' choices are shown. Default `live`. */
  choice_visibility: 'live' | 'after_decided' | 'never';
  /** Seal as soon as the outcome cannot change. Default false. */
  early_close: boolean;
  /** Seconds an early-determined outcome settles before sealing, 0..3600. Default 45. */
  settle_window: number;
  /** Whether the creator's seat votes. Default true. */
  creator_votes: boolean;
  /** Decisions open at once, 1..5. Default 1. */
  max_open_decisions: number;
}

/** The keys a room is created with: any subset; the rest take their defaults. */
export type RoomConfigInput = Partial<RoomConfig>;

/** The keys a settings patch may change (type, visibility and mechanism are fixed at creation). */
export type RoomSettingsPatch = Partial<Omit<RoomConfig, 'type' | 'visibility' | 'mechanism'>>;
