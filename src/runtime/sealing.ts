/**
 * Turns a sealed decision (or a closing room) into its signed receipt, chained to the room's head
 * (docs/receipts.md). Runs inside the room's turn, so the chain order is the seal order.
 */
import { randomUUID } from 'node:crypto';
import { ballotText } from '../domain/ballots.js';
import { iso } from '../domain/format.js';
import { messagesFor } from '../domain/room-acts.js';
import {
  buildConclusionReceiptPayload,
  buildDecisionReceiptPayload,
  type Keyring,
  signReceipt,
} from '../receipts/index.js';
import type { StoredReceipt } from '../store/port.js';
import type { DecisionState, RoomState } from './room-state.js';

export function roomUrl(baseUrl: string, slug: string): string {
  return `${baseUrl}/r/${slug}`;
}

export function signDecisionReceipt(
  state: RoomState,
  decision: DecisionState,
  keyring: Keyring,
  baseUrl: string,
): StoredReceipt {
  const { room } = state;
  const d = decision.data;
  const seal = d.seal;
  if (!seal) throw new Error(`decision ${d.id} is not sealed`);
  const parameters: Record<string, unknown> = { question: d.question, ...seal.parameters };
  if (d.agreement) parameters.agreement = true;
  const hideVotes = room.config.choice_visibility === 'never';
  const payload = buildDecisionReceiptPayload({
    roomUrl: roomUrl(baseUrl, room.slug),
    jti: `urn:uuid:${randomUUID()}`,
    sequence: room.chain.length + 1,
    prevHash: room.chain.head,
    deliberationMessageCount: messagesFor(room.speech, d.id),
    sealInstantMs: seal.at,
    decisionId: d.id,
    decisionKind: room.config.type === 'persistent' ? 'standing' : 'ephemeral',
    mechanism: { kind: seal.mechanism, parameters },
    windows: {
      deliberation_started_at: iso(d.openedAt),
      voting_started_at: iso(d.votingStartedAt ?? d.votingOpensAt ?? d.openedAt),
      voting_ended_at: iso(seal.votingEndedAt),
      cooldown_ended_at: iso(seal.at),
    },
    votes: hideVotes
      ? []
      : seal.votes.map((v) => ({
          agent_id: v.agentId,
          choice: ballotText(v.ballot),
          weight: 1,
          cast_at: iso(v.castAt),
          mandate_ref: v.mandateRef,
          ...(v.agentIss !== undefined ? { agent_iss: v.agentIss } : {}),
          signature: null,
        })),
    abstentions: seal.abstentions.map((a) => ({
      agent_id: a.agentId,
      ...(a.agentIss !== undefined ? { agent_iss: a.agentIss } : {}),
      reason: a.reason,
      declared_at: iso(a.declaredAt),
    })),
    outcome: {
      status: seal.status,
      winning_option: seal.winner,
      tallies: seal.tallies,
      diagnostics: { cast_votes: seal.castVotes, eligible_voters: seal.eligibleVoters },
    },
  });
  const { jws, receipt_hash } = signReceipt(payload, keyring.current);
  return { sequence: room.chain.length + 1, decision_id: d.id, jws, receipt_hash };
}

export function signConclusionReceipt(state: RoomState, keyring: Keyring, baseUrl: string): StoredReceipt {
  const { room } = state;
  const conclusion = room.conclusion;
  if (!conclusion) throw new Error(`room ${room.slug} is not closing`);
  const payload = buildConclusionReceiptPayload({
    roomUrl: roomUrl(baseUrl, room.slug),
    jti: `urn:uuid:${randomUUID()}`,
    sequence: room.chain.length + 1,
    prevHash: room.chain.head,
    deliberationMessageCount: room.speech.total,
    closedAtMs: conclusion.at,
    closingStatement: conclusion.statement,
    concludedBy: conclusion.concludedBy,
  });
  const { jws, receipt_hash } = signReceipt(payload, keyring.current);
  return { sequence: room.chain.length + 1, decision_id: null, jws, receipt_hash };
}
