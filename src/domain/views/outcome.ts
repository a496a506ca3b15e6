/** GET /outcome (docs/receipts.md): sealed rows in seal order, open rows last, with receipts. */
import type { RoomState } from '../state.js';
import { decisionStatus, iso, roomStatus, sealedInSealOrder } from './common.js';
import { sealFields } from './decision-summary.js';

export interface ReceiptRow {
  decision_id: string | null;
  jws: string;
  receipt_hash: string;
}

export function outcomeView(
  state: RoomState,
  receipts: ReceiptRow[],
  baseUrl: string,
  now: number,
): Record<string, unknown> {
  const jwsByHash = new Map(receipts.map((r) => [r.receipt_hash, r.jws]));
  const sealed = sealedInSealOrder(state);
  const open = state.decisions.filter((d) => !state.room.sealOrder.includes(d.data.id));
  const rows = [...sealed, ...open].map((d) => {
    const data = d.data;
    const hash = data.receipt?.hash ?? null;
    return {
      id: data.id,
      seq: data.seq,
      question: data.question,
      options: data.options,
      status: decisionStatus(d, now),
      ...(data.agreement ? { agreement: true } : {}),
      opened_at: iso(data.openedAt),
      voting_opens_at: iso(data.votingOpensAt),
      voting_ends_at: iso(data.votingEndsAt),
      ...sealFields(d),
      receipt_jws: hash === null ? null : (jwsByHash.get(hash) ?? null),
    };
  });
  const last = sealed.at(-1);
  const conclusion = state.room.conclusion;
  return {
    slug: state.slug,
    status: roomStatus(state, now),
    about: state.room.about,
    question: last?.data.question ?? null,
    resolved_outcome: last?.data.seal?.outcome ?? null,
    resolved_winner: last?.data.seal?.winner ?? null,
    resolved_at: iso(last?.data.seal?.at),
    receipt_hash: last?.data.receipt?.hash ?? null,
    prev_hash: last?.data.receipt?.prevHash ?? null,
    receipt_jws: last?.data.receipt ? (jwsByHash.get(last.data.receipt.hash) ?? null) : null,
    decisions: rows,
    conclusion:
      conclusion?.receipt != null
        ? {
            concluded_at: iso(conclusion.at),
            closing_statement: conclusion.statement,
            concluded_by: conclusion.concludedBy,
            prev_hash: conclusion.receipt.prevHash,
            receipt_hash: conclusion.receipt.hash,
            receipt_jws: jwsByHash.get(conclusion.receipt.hash) ?? null,
          }
        : null,
    verification: {
      jwks_url: `${baseUrl}/.well-known/jwks.json`,
      alg: 'EdDSA',
      typ: 'svc-receipt+jwt',
      hash: 'sha256 over the exact compact JWS bytes, hex, prefixed sha256:',
    },
  };
}
