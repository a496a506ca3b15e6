/**
 * The additive `transparency_log` field of each receipt in `/outcome`: where the receipt is in the
 * log and its inclusion proof against the latest published checkpoint (the checkpoint note is
 * included, so the whole check needs nothing else but the note verifier key). Absent until the
 * receipt is sequenced and published.
 */
import type { PublishedCheckpoint, TransparencyLog } from './log.js';
import { toBase64 } from './note.js';

export interface LogInclusion {
  index: number;
  tree_size: number;
  checkpoint: string;
  inclusion_proof: string[];
}

export async function logInclusion(
  log: TransparencyLog,
  receiptHash: string,
  latest?: PublishedCheckpoint | null,
): Promise<LogInclusion | null> {
  const found = await log.receiptProof(receiptHash, latest);
  if (!found) return null;
  return {
    index: found.index,
    tree_size: found.checkpoint.size,
    checkpoint: found.checkpoint.note,
    inclusion_proof: found.proof.map(toBase64),
  };
}

type Row = Record<string, unknown>;

/** Adds `transparency_log` to every sealed decision row and the conclusion of an outcome body. */
export async function withLogInclusion(body: Row, log: TransparencyLog | undefined): Promise<Row> {
  if (!log) return body;
  const rows = [...((body.decisions as Row[] | undefined) ?? []), ...(body.conclusion ? [body.conclusion as Row] : [])];
  if (!rows.some((row) => typeof row.receipt_hash === 'string')) return body;
  // Every row is proved against the same checkpoint, read once.
  const latest = await log.latest();
  await Promise.all(
    rows.map(async (row) => {
      if (typeof row.receipt_hash !== 'string') return;
      const inclusion = await logInclusion(log, row.receipt_hash, latest);
      if (inclusion) row.transparency_log = inclusion;
    }),
  );
  return body;
}
