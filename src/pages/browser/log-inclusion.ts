/**
 * The room page's transparency-log check, beside each receipt's signature check
 * (docs/transparency-log.md, Verifying): every receipt's `transparency_log` field from `/outcome`
 * is verified in the reader's browser with the client library's browser-safe functions — the leaf's
 * position label (its VRF proof, against the position keys discovery publishes, for the room and
 * sequence the receipt signs), the checkpoint's note signature against discovery's verifier key
 * (`audit_log`), then the inclusion proof of the commitment leaf rebuilt from the receipt's exact
 * JWS bytes and that label. Every checkpoint the
 * page accepts must also extend the ones it accepted before (a consistency proof from /log), so a
 * service that shows this page a rolled-back or forked log while it is open is caught too.
 */
import {
  LogVerificationError,
  type PositionKey,
  type VerifiedCheckpoint,
  verifyConsistency,
  verifyReceiptInLog,
} from '../../client/tlog.js';
import { ApiError, api, type Json } from './api.js';

export interface LogWatch {
  /** Discovery's `audit_log.verifier_key`; null when the service publishes no log. */
  verifierKey: string | null;
  /** Discovery's `audit_log.position_keys`: the keys whose VRF labels the leaves carry. */
  positionKeys: PositionKey[];
  /** The largest checkpoint this page has verified, which every later one must extend. */
  newest: VerifiedCheckpoint | null;
  /** Checkpoints (`size root`) already proved consistent with `newest`. */
  consistent: Set<string>;
}

/** A watch over discovery's `audit_log` (absent when the service publishes no log). */
export function logWatch(auditLog: Json | undefined): LogWatch {
  const verifierKey = typeof auditLog?.verifier_key === 'string' ? auditLog.verifier_key : null;
  const positionKeys = Array.isArray(auditLog?.position_keys) ? (auditLog.position_keys as PositionKey[]) : [];
  return { verifierKey, positionKeys, newest: null, consistent: new Set() };
}

/** Proves `checkpoint` and the newest one seen on this page are one history; keeps the larger. */
async function extendsNewest(watch: LogWatch, checkpoint: VerifiedCheckpoint): Promise<void> {
  const id = `${checkpoint.size} ${checkpoint.root}`;
  const newest = watch.newest;
  if (!newest || watch.consistent.has(id)) {
    watch.newest ??= checkpoint;
    watch.consistent.add(id);
    return;
  }
  const [older, newer] = checkpoint.size <= newest.size ? [checkpoint, newest] : [newest, checkpoint];
  const proof =
    older.size === newer.size
      ? []
      : ((await api('GET', `/log/proof/consistency?first=${older.size}&second=${newer.size}`)).consistency_proof as
          | string[]
          | undefined);
  if (!Array.isArray(proof) || !verifyConsistency(older, newer, proof)) {
    throw new LogVerificationError(
      'consistency',
      `the checkpoint of tree size ${checkpoint.size} and the one of size ${newest.size} this page verified before are not one history`,
    );
  }
  if (newer === checkpoint) {
    watch.newest = checkpoint;
    watch.consistent = new Set([`${newest.size} ${newest.root}`]);
  }
  watch.consistent.add(id);
}

function show(slot: HTMLElement, verified: 'true' | 'false' | 'unsequenced' | 'none', text: string): void {
  slot.dataset.logVerified = verified;
  slot.textContent = text;
}

/**
 * Fills every receipt's log slot from an outcome body. Answers how many receipts are still to be
 * checked (not sequenced yet, or the service was unreachable), so the page reads the outcome again
 * shortly.
 */
export async function showLogInclusion(outcome: Json, watch: LogWatch): Promise<{ unsequenced: number }> {
  const rows: Json[] = [
    ...(Array.isArray(outcome.decisions) ? outcome.decisions : []),
    ...(outcome.conclusion ? [outcome.conclusion] : []),
  ].filter((row: Json) => typeof row.receipt_hash === 'string');
  let unsequenced = 0;
  for (const row of rows) {
    const slot = document.querySelector<HTMLElement>(`[data-log-receipt="${CSS.escape(row.receipt_hash)}"]`);
    if (!slot) continue;
    if (!watch.verifierKey) {
      show(slot, 'none', 'transparency log: this service publishes none');
      continue;
    }
    const inclusion = row.transparency_log as Json | undefined;
    if (!inclusion) {
      unsequenced++;
      show(slot, 'unsequenced', 'transparency log: not yet sequenced (checking again shortly)');
      continue;
    }
    try {
      if (typeof row.receipt_jws !== 'string')
        throw new LogVerificationError('inclusion', 'the receipt JWS is missing');
      const checkpoint = await verifyReceiptInLog(
        row.receipt_jws,
        inclusion as Parameters<typeof verifyReceiptInLog>[1],
        watch.verifierKey,
        watch.positionKeys,
      );
      await extendsNewest(watch, checkpoint);
      show(slot, 'true', `✓ included in the log at index ${inclusion.index} of tree size ${checkpoint.size}`);
    } catch (error) {
      if (!(error instanceof LogVerificationError) && !(error instanceof ApiError && error.status < 500)) {
        // The service could not be reached or was busy: nothing was shown false, so look again.
        unsequenced++;
        show(slot, 'unsequenced', 'transparency log: could not be checked just now (checking again shortly)');
        continue;
      }
      const reason =
        error instanceof LogVerificationError ? `${error.failure}: ${error.message}` : (error as Error).message;
      show(slot, 'false', `✗ transparency log: ${reason}`);
    }
  }
  return { unsequenced };
}
