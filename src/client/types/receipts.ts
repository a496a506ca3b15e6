/**
 * Receipts on the wire (docs/receipts.md): the signed payloads of decision and conclusion receipts,
 * and the outcome body that carries them in chain order.
 */
import type { LogInclusion } from '../tlog.js';
import type { DecisionOpening, DecisionStatus, OutcomeStatus, RoomStatus, SealFields } from './views.js';

export interface ReceiptVote {
  /** A mandate's `sub`, or `participant:<id>`. */
  agent_id: string;
  /** The verified issuer of a mandate-cast ballot; absent otherwise. */
  agent_iss?: string;
  /** Single-choice: the option text; arrays and maps: their JCS text. */
  choice: string;
  weight: number;
  cast_at: string;
  mandate_ref: string | null;
  signature: null;
}

export interface ReceiptAbstention {
  agent_id: string;
  agent_iss?: string;
  reason: string;
  declared_at: string;
}

export interface ReceiptOutcome {
  status: OutcomeStatus;
  winning_option: string | null;
  tallies: Record<string, number>;
  diagnostics: { cast_votes: number; eligible_voters: number };
}

interface ReceiptClaims {
  /** The room's URL. */
  iss: string;
  aud: string;
  /** `urn:uuid:<v4>`. */
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
}

/** The payload of a decision receipt: enough to replay the outcome from its ballots. */
export interface DecisionReceipt extends ReceiptClaims {
  svc: {
    room_id: string;
    sequence: number;
    prev_hash: string | null;
    decision_id: string;
    decision_kind: 'standing' | 'ephemeral';
    mechanism: { kind: string; parameters: Record<string, unknown> };
    windows: {
      deliberation_started_at: string;
      voting_started_at: string;
      voting_ended_at: string;
      cooldown_ended_at: string;
    };
    deliberation_message_count: number;
    votes: ReceiptVote[];
    abstentions: ReceiptAbstention[];
    overrides: [];
    outcome: ReceiptOutcome;
  };
}

/** The payload of the receipt that closes a room's chain. */
export interface ConclusionReceipt extends ReceiptClaims {
  svc: {
    room_id: string;
    sequence: number;
    prev_hash: string | null;
    decision_id: null;
    decision_kind: 'conclusion';
    mechanism: null;
    windows: null;
    deliberation_message_count: number;
    votes: [];
    abstentions: [];
    overrides: [];
    outcome: ReceiptOutcome;
    closing_statement: string | null;
    /** A mandate `sub`, `participant:<id>`, or `operator`. */
    concluded_by: string;
  };
}

export type ReceiptPayload = DecisionReceipt | ConclusionReceipt;

/** A decision in the outcome body: sealed rows in seal order, open rows last. */
export interface OutcomeDecision extends Omit<DecisionOpening, 'context' | 'eligible_participant_ids'>, SealFields {
  status: DecisionStatus;
  agreement?: true;
  opened_at: string | null;
  voting_opens_at: string | null;
  voting_ends_at: string | null;
  /** The compact JWS whose payload is a DecisionReceipt; null until sealed. */
  receipt_jws: string | null;
  /** Where the receipt is in the transparency log; absent until it is sequenced and published. */
  transparency_log?: LogInclusion;
}

/** GET /api/rooms/{slug}/outcome (docs/receipts.md, Where receipts are). */
export interface Outcome {
  slug: string;
  status: RoomStatus;
  about: string | null;
  /** The last sealed decision's question, outcome and receipt. */
  question: string | null;
  resolved_outcome: string | null;
  resolved_winner: string | null;
  resolved_at: string | null;
  receipt_hash: string | null;
  prev_hash: string | null;
  receipt_jws: string | null;
  decisions: OutcomeDecision[];
  /** The conclusion receipt, once the room is closed. */
  conclusion: {
    concluded_at: string | null;
    closing_statement: string | null;
    concluded_by: string;
    prev_hash: string | null;
    receipt_hash: string;
    receipt_jws: string | null;
    /** As on a decision row. */
    transparency_log?: LogInclusion;
  } | null;
  /** How to check the receipts. */
  verification: { jwks_url: string; alg: 'EdDSA'; typ: 'svc-receipt+jwt'; hash: string };
}
