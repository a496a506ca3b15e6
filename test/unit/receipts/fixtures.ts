import {
  buildConclusionReceiptPayload,
  buildDecisionReceiptPayload,
  type ConclusionReceiptInput,
  type DecisionReceiptInput,
  type SigningKey,
  signingKeyFromSeed,
  signReceipt,
} from '../../../src/receipts/index.js';
import { seedBytes, vectors } from './vectors.js';

export const ROOM_URL = 'https://conclave.example/r/k7m3pq2dnx';

/** The vector room key under its RFC 7638 kid, as the service signs with it. */
export const roomKey: SigningKey = signingKeyFromSeed(seedBytes(vectors.keys.room.seed_hex));

export function decisionInput(overrides: Partial<DecisionReceiptInput> = {}): DecisionReceiptInput {
  return {
    roomUrl: ROOM_URL,
    jti: 'urn:uuid:0f8c3b7e-55a1-4f0e-9d43-8b1f6c2a7d10',
    sealInstantMs: Date.parse('2026-05-01T11:00:00.999Z'),
    sequence: 1,
    prevHash: null,
    decisionId: '9b2e6f0a-3c1d-4e5f-8a7b-6c5d4e3f2a1b',
    decisionKind: 'ephemeral',
    mechanism: {
      kind: 'plurality',
      parameters: {
        ballot_mode: 'single_choice',
        options: ['alpha', 'beta', 'gamma'],
        pass_threshold: 0.5,
        pass_threshold_comparison: 'strict',
        plurality_fallthrough: true,
        question: 'Which option?',
        quorum: 0,
        tie_break: 'random_seeded',
      },
    },
    windows: {
      deliberation_started_at: '2026-05-01T10:00:00.000Z',
      voting_started_at: '2026-05-01T10:00:00.000Z',
      voting_ended_at: '2026-05-01T11:00:00.000Z',
      cooldown_ended_at: '2026-05-01T11:00:00.000Z',
    },
    deliberationMessageCount: 3,
    votes: [
      {
        agent_id: 'participant:1a2b',
        choice: 'alpha',
        weight: 1,
        cast_at: '2026-05-01T10:05:00.000Z',
        mandate_ref: null,
        signature: null,
      },
      {
        agent_id: 'did:key:z6Mkf7z6Lc2NNJactrf4UFDwCw2625WpLeMRLSHKV1BRxKuf',
        choice: 'alpha',
        weight: 1,
        cast_at: '2026-05-01T10:07:00.000Z',
        mandate_ref: 'urn:uuid:5d6e0000-0000-4000-8000-000000000000',
        signature: null,
      },
    ],
    abstentions: [
      { agent_id: 'participant:4e1d', reason: 'conflict of interest', declared_at: '2026-05-01T10:20:00.000Z' },
    ],
    outcome: {
      status: 'completed',
      winning_option: 'alpha',
      tallies: { alpha: 2, beta: 0, gamma: 0 },
      diagnostics: { cast_votes: 2, eligible_voters: 3 },
    },
    ...overrides,
  };
}

export function conclusionInput(overrides: Partial<ConclusionReceiptInput> = {}): ConclusionReceiptInput {
  return {
    roomUrl: ROOM_URL,
    jti: 'urn:uuid:1a2b3c4d-0000-4000-8000-000000000003',
    closedAtMs: Date.parse('2026-05-01T12:00:00.000Z'),
    sequence: 1,
    prevHash: null,
    deliberationMessageCount: 7,
    closingStatement: 'Done.',
    concludedBy: 'operator',
    ...overrides,
  };
}

export type OutcomeRow = Record<string, unknown> & {
  id: string;
  prev_hash: string | null;
  receipt_hash: string | null;
  receipt_jws: string | null;
};

export interface OutcomeFixture {
  status: string;
  decisions: OutcomeRow[];
  conclusion: Record<string, unknown> | null;
}

/** A concluded room: two sealed decisions (sealed in reverse seq order) and the conclusion. */
export function concludedOutcome(key: SigningKey = roomKey): OutcomeFixture {
  const first = signReceipt(buildDecisionReceiptPayload(decisionInput({ decisionId: 'd2' })), key);
  const second = signReceipt(
    buildDecisionReceiptPayload(decisionInput({ decisionId: 'd1', sequence: 2, prevHash: first.receipt_hash })),
    key,
  );
  const conclusion = signReceipt(
    buildConclusionReceiptPayload(conclusionInput({ sequence: 3, prevHash: second.receipt_hash })),
    key,
  );
  const row = (id: string, seq: number, prev: string | null, signed: { jws: string; receipt_hash: string }) => ({
    id,
    seq,
    status: 'resolved',
    prev_hash: prev,
    receipt_hash: signed.receipt_hash,
    receipt_jws: signed.jws,
  });
  return {
    status: 'concluded',
    decisions: [row('d2', 2, null, first), row('d1', 1, first.receipt_hash, second)],
    conclusion: {
      concluded_at: '2026-05-01T12:00:00.000Z',
      closing_statement: 'Done.',
      concluded_by: 'operator',
      prev_hash: second.receipt_hash,
      receipt_hash: conclusion.receipt_hash,
      receipt_jws: conclusion.jws,
    },
  };
}

export function openRow(id: string, seq: number): OutcomeRow {
  return { id, seq, status: 'voting', prev_hash: null, receipt_hash: null, receipt_jws: null };
}
