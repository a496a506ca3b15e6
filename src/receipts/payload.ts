import { RECEIPT_HASH_PATTERN, receiptHash } from './hash.js';
import { receiptHeader, signCompact } from './jws.js';
import type { SigningKey } from './keys.js';

export type ReceiptOutcomeStatus = 'completed' | 'rejected' | 'tied' | 'no_quorum';

export interface ReceiptVote {
  agent_id: string;
  /** The verified issuer of a mandate-cast ballot (docs/architecture.md, Credentials); absent otherwise. */
  agent_iss?: string;
  choice: string;
  weight: number;
  cast_at: string;
  mandate_ref: string | null;
  signature: null;
}

export interface ReceiptAbstention {
  agent_id: string;
  /** The verified issuer of a mandate abstention; absent otherwise. */
  agent_iss?: string;
  reason: string;
  declared_at: string;
}

export interface ReceiptWindows {
  deliberation_started_at: string;
  voting_started_at: string;
  voting_ended_at: string;
  cooldown_ended_at: string;
}

export interface ReceiptOutcome {
  status: ReceiptOutcomeStatus;
  winning_option: string | null;
  tallies: Record<string, number>;
  diagnostics: { cast_votes: number; eligible_voters: number };
}

export interface ReceiptMechanism {
  kind: string;
  parameters: Record<string, unknown>;
}

interface ReceiptClaimsBase {
  iss: string;
  aud: string;
  jti: string;
  iat: number;
}

/** The claims of a decision receipt (docs/receipts.md). */
export interface DecisionReceiptPayload extends ReceiptClaimsBase {
  svc: {
    room_id: string;
    sequence: number;
    prev_hash: string | null;
    decision_id: string;
    decision_kind: 'standing' | 'ephemeral';
    mechanism: ReceiptMechanism;
    windows: ReceiptWindows;
    deliberation_message_count: number;
    votes: ReceiptVote[];
    abstentions: ReceiptAbstention[];
    overrides: [];
    outcome: ReceiptOutcome;
  };
}

/** The claims of a conclusion receipt (docs/receipts.md). */
export interface ConclusionReceiptPayload extends ReceiptClaimsBase {
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
    outcome: {
      status: 'completed';
      winning_option: null;
      tallies: Record<string, never>;
      diagnostics: { cast_votes: 0; eligible_voters: 0 };
    };
    closing_statement: string | null;
    concluded_by: string;
  };
}

export type ReceiptPayload = DecisionReceiptPayload | ConclusionReceiptPayload;

export interface ChainPosition {
  roomUrl: string;
  /** `urn:uuid:<v4>`, chosen by the caller so that building stays pure. */
  jti: string;
  sequence: number;
  prevHash: string | null;
  deliberationMessageCount: number;
}

export interface DecisionReceiptInput extends ChainPosition {
  /** The logical seal instant (docs/how-decisions-end.md), epoch ms. */
  sealInstantMs: number;
  decisionId: string;
  decisionKind: 'standing' | 'ephemeral';
  mechanism: ReceiptMechanism;
  windows: ReceiptWindows;
  votes: ReceiptVote[];
  abstentions: ReceiptAbstention[];
  outcome: ReceiptOutcome;
}

export interface ConclusionReceiptInput extends ChainPosition {
  closedAtMs: number;
  closingStatement: string | null;
  /** Mandate `sub`, `participant:<id>`, or `operator`. */
  concludedBy: string;
}

/**
 * Builds the decision receipt claims. Every nested object is rebuilt field by field so that extra
 * properties riding on the inputs can never reach the signed bytes.
 */
export function buildDecisionReceiptPayload(input: DecisionReceiptInput): DecisionReceiptPayload {
  return {
    ...baseClaims(input, input.sealInstantMs),
    svc: {
      room_id: input.roomUrl,
      sequence: input.sequence,
      prev_hash: input.prevHash,
      decision_id: input.decisionId,
      decision_kind: input.decisionKind,
      mechanism: { kind: input.mechanism.kind, parameters: input.mechanism.parameters },
      windows: {
        deliberation_started_at: input.windows.deliberation_started_at,
        voting_started_at: input.windows.voting_started_at,
        voting_ended_at: input.windows.voting_ended_at,
        cooldown_ended_at: input.windows.cooldown_ended_at,
      },
      deliberation_message_count: input.deliberationMessageCount,
      votes: input.votes.map((v) => ({
        agent_id: v.agent_id,
        choice: v.choice,
        weight: v.weight,
        cast_at: v.cast_at,
        mandate_ref: v.mandate_ref,
        ...(v.agent_iss !== undefined ? { agent_iss: v.agent_iss } : {}),
        signature: null,
      })),
      abstentions: input.abstentions.map((a) => ({
        agent_id: a.agent_id,
        ...(a.agent_iss !== undefined ? { agent_iss: a.agent_iss } : {}),
        reason: a.reason,
        declared_at: a.declared_at,
      })),
      overrides: [],
      outcome: {
        status: input.outcome.status,
        winning_option: input.outcome.winning_option,
        tallies: { ...input.outcome.tallies },
        diagnostics: {
          cast_votes: input.outcome.diagnostics.cast_votes,
          eligible_voters: input.outcome.diagnostics.eligible_voters,
        },
      },
    },
  };
}

export function buildConclusionReceiptPayload(input: ConclusionReceiptInput): ConclusionReceiptPayload {
  return {
    ...baseClaims(input, input.closedAtMs),
    svc: {
      room_id: input.roomUrl,
      sequence: input.sequence,
      prev_hash: input.prevHash,
      decision_id: null,
      decision_kind: 'conclusion',
      mechanism: null,
      windows: null,
      deliberation_message_count: input.deliberationMessageCount,
      votes: [],
      abstentions: [],
      overrides: [],
      outcome: {
        status: 'completed',
        winning_option: null,
        tallies: {},
        diagnostics: { cast_votes: 0, eligible_voters: 0 },
      },
      closing_statement: input.closingStatement,
      concluded_by: input.concludedBy,
    },
  };
}

/** Signs a receipt payload with the room-receipt header and returns its chain hash (docs/receipts.md). */
export function signReceipt(payload: ReceiptPayload, key: SigningKey): { jws: string; receipt_hash: string } {
  const jws = signCompact(receiptHeader(key.kid), payload, key);
  return { jws, receipt_hash: receiptHash(jws) };
}

function baseClaims(position: ChainPosition, instantMs: number): ReceiptClaimsBase {
  assertChainPosition(position);
  if (!Number.isFinite(instantMs)) throw new Error('receipt instant must be a finite epoch-ms number');
  return {
    iss: position.roomUrl,
    aud: position.roomUrl,
    jti: position.jti,
    iat: Math.floor(instantMs / 1000),
  };
}

// The first link and only the first link has no predecessor (docs/receipts.md).
function assertChainPosition(position: ChainPosition): void {
  if (!Number.isInteger(position.sequence) || position.sequence < 1) {
    throw new Error(`receipt sequence must be a positive integer, got ${position.sequence}`);
  }
  if (position.prevHash !== null && !RECEIPT_HASH_PATTERN.test(position.prevHash)) {
    throw new Error(`prev_hash must be "sha256:<64 hex>" or null, got ${position.prevHash}`);
  }
  if ((position.sequence === 1) !== (position.prevHash === null)) {
    throw new Error('prev_hash must be null exactly for sequence 1');
  }
  if (!Number.isInteger(position.deliberationMessageCount) || position.deliberationMessageCount < 0) {
    throw new Error('deliberation_message_count must be a non-negative integer');
  }
}
