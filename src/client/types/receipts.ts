/**
 * The signed payloads of decision and conclusion receipts (docs/receipts.md). Written here, not
 * generated: a receipt travels as a compact JWS string (`receipt_jws`), so no REST schema describes
 * its payload. The server builds the same claims in src/receipts/payload.ts; test/client/types.test.ts
 * checks the two agree.
 */
import type { OutcomeStatus } from './generated.js';

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
