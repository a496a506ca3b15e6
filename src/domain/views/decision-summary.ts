/** DecisionSummary (docs/concepts.md, Decisions and slates) and the outcome rows of docs/receipts.md. */
import type { DecisionState, RoomState } from '../state.js';
import { decisionStatus, displayName, iso, proposalsOpen } from './common.js';

/** The fields that name a decision and its slate. */
function opening(d: DecisionState): Record<string, unknown> {
  const data = d.data;
  return {
    id: data.id,
    seq: data.seq,
    question: data.question,
    context: data.context,
    options: data.options,
    eligible_participant_ids: data.eligibleIds,
  };
}

/** The sealed outcome and chain links of a decision (all null before sealing). */
export function sealFields(d: DecisionState): Record<string, unknown> {
  const seal = d.data.seal;
  return {
    resolved_at: iso(seal?.at),
    resolved_outcome: seal?.outcome ?? null,
    resolved_winner: seal?.winner ?? null,
    outcome_status: seal?.status ?? null,
    prev_hash: d.data.receipt?.prevHash ?? null,
    receipt_hash: d.data.receipt?.hash ?? null,
  };
}

export function decisionSummary(
  state: RoomState,
  d: DecisionState,
  now: number,
  full = false,
): Record<string, unknown> {
  const data = d.data;
  return {
    ...opening(d),
    opened_at: iso(data.openedAt),
    voting_opens_at: iso(data.votingOpensAt),
    voting_ends_at: iso(data.votingEndsAt),
    status: decisionStatus(d, now),
    ...(data.agreement ? { agreement: true } : {}),
    proposals_open: proposalsOpen(state, d),
    ...sealFields(d),
    ...(full ? { option_proposers: optionProposerNames(state, d) } : {}),
  };
}

export function optionProposerNames(state: RoomState, d: DecisionState): (string | null)[] {
  return d.data.optionProposers.map((id) => (id === null ? null : displayName(state, id)));
}

/** The decision object of POST /ask responses (docs/concepts.md, Decisions and slates). */
export function askDecision(state: RoomState, d: DecisionState): Record<string, unknown> {
  return {
    ...opening(d),
    voting_opens_at: iso(d.data.votingOpensAt),
    voting_ends_at: iso(d.data.votingEndsAt),
    prev_hash: state.room.chain.head,
    status: d.phase === 'proposing' ? 'proposing' : 'voting',
    ...(d.data.agreement ? { agreement: true } : {}),
  };
}
