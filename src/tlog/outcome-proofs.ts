/**
 * The additive `transparency_log` field of each receipt in `/outcome`: where the receipt is in the
 * log, its inclusion proof against the latest published checkpoint (the checkpoint note is
 * included, so the whole check needs nothing else but the note verifier key), and the leaf's
 * position label with its VRF proof, so the reader can rebuild the commitment leaf from the JWS
 * and check the label against discovery's position key. Absent until the receipt is sequenced and
 * published.
 */
import type { PublishedCheckpoint, TransparencyLog } from './log.js';
import { toBase64 } from './note.js';
import type { PositionLabels } from './position-labels.js';
import { receiptPosition } from './position-labels.js';
import { parseReceiptLeaf } from './receipt-leaf.js';

export interface LogPosition {
  key_id: string;
  label: string;
  proof: string;
}

export interface LogInclusion {
  index: number;
  tree_size: number;
  checkpoint: string;
  inclusion_proof: string[];
  position: LogPosition;
}

/** A proven label in its wire form: the label base64, the proof base64url (as the member endpoint gives them). */
export function wireLabel(proven: { key_id: string; label: Uint8Array; proof: Uint8Array }): LogPosition {
  return {
    key_id: proven.key_id,
    label: toBase64(proven.label),
    proof: Buffer.from(proven.proof).toString('base64url'),
  };
}

export async function logInclusion(
  log: TransparencyLog,
  positions: PositionLabels,
  receiptJws: string,
  receiptHash: string,
  latest?: PublishedCheckpoint | null,
): Promise<LogInclusion | null> {
  const found = await log.receiptProof(receiptHash, latest);
  if (!found) return null;
  // The key that labelled this leaf (an older signing key's, after a rotation), read from the leaf.
  const data = await log.leafData(found.index);
  const leaf = data === null ? null : parseReceiptLeaf(new TextEncoder().encode(data));
  const key = leaf ? positions.byId(leaf.keyId) : null;
  if (!key) return null;
  return {
    index: found.index,
    tree_size: found.checkpoint.size,
    checkpoint: found.checkpoint.note,
    inclusion_proof: found.proof.map(toBase64),
    position: wireLabel(positions.prove(key, receiptPosition(receiptJws))),
  };
}

type Row = Record<string, unknown>;

/**
 * When a reader should look again for proofs still to come. The integrator looks at the queue every
 * 200 ms and publishes right after (docs/transparency-log.md, Order and timing): a receipt normally has its
 * proof within half a second of its seal, a few seconds after an integrator failover.
 */
export const LOG_PROOF_RETRY_SECONDS = 1;

/** What an outcome says about receipts the log has not published yet (`log_proofs_pending`). */
function pendingProofs(count: number): Row {
  return {
    receipts: count,
    retry_after_seconds: LOG_PROOF_RETRY_SECONDS,
    hint: `${count === 1 ? '1 receipt is' : `${count} receipts are`} not in the transparency log yet; read the outcome again in ${LOG_PROOF_RETRY_SECONDS} s for its transparency_log proof (it normally follows a seal within seconds). The receipts themselves are final and verify now.`,
  };
}

/**
 * Adds `transparency_log` to every sealed decision row and the conclusion of an outcome body, and
 * `log_proofs_pending` when some of them have none yet.
 */
export async function withLogInclusion(
  body: Row,
  log: TransparencyLog | undefined,
  positions: PositionLabels | undefined,
): Promise<Row> {
  if (!log || !positions) return body;
  const rows = [...((body.decisions as Row[] | undefined) ?? []), ...(body.conclusion ? [body.conclusion as Row] : [])];
  if (!rows.some((row) => typeof row.receipt_hash === 'string')) return body;
  // Every row is proved against the same checkpoint, read once.
  const latest = await log.latest();
  let pending = 0;
  await Promise.all(
    rows.map(async (row) => {
      if (typeof row.receipt_hash !== 'string' || typeof row.receipt_jws !== 'string') return;
      const inclusion = await logInclusion(log, positions, row.receipt_jws, row.receipt_hash, latest);
      if (inclusion) row.transparency_log = inclusion;
      else pending++;
    }),
  );
  if (pending > 0) body.log_proofs_pending = pendingProofs(pending);
  return body;
}
