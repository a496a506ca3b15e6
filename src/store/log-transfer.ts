/**
 * Moving a transparency log from one store to another (docs/transparency-log.md, "Moving stores"),
 * through the LogStore port's export and import: the same leaves in the same order, the same tiles,
 * every published checkpoint with its cosignatures, the room counts, the receipt-hash index, the
 * queue in its order (with the live log, which consumes it) and the state. A store holds two logs,
 * the live commitment log and the frozen v1 log; each is moved on its own, the same way. So every checkpoint published before the move is consistent
 * with every one after it; a log rebuilt from the receipts instead would be a different tree (the
 * back-fill orders by signing time, not by the order the old log took), i.e. a fork.
 */
import type { FrozenLogStore, LogState, LogStore, QueuedReceipt } from './tlog-port.js';

/** What a move reads and writes of a log: the live one's or the frozen one's. */
export type MovableLog = FrozenLogStore;

/** Parts of at most this many items (leaves, hashes, checkpoints, rooms, queued receipts). */
export const TRANSFER_CHUNK = 5000;

/** The target holds another log: moving this one there would have to rewrite one of them. */
export class LogTransferRefused extends Error {}

export type LogComparison =
  /** The target's log is empty: nothing published, nothing stored. */
  | { kind: 'absent' }
  /** The target holds exactly this log (a move that finished before): same state, same latest checkpoint. */
  | { kind: 'same' }
  | { kind: 'other'; why: string };

/**
 * What the target's log is to the source's. `queues`: the two stores' live logs, whose shared queue
 * travels with the live log and must agree too (omitted for the frozen log, which has none).
 */
export async function compareLogs(
  source: MovableLog,
  target: MovableLog,
  queues?: { source: Pick<LogStore, 'queued'>; target: Pick<LogStore, 'queued'> },
): Promise<LogComparison> {
  const [here, there] = await Promise.all([source.state(), target.state()]);
  if (!(await holdsLog(target, there))) return { kind: 'absent' };
  const described = (state: LogState) =>
    `${state.size} leaves, ${state.checkpoint === null ? 'no checkpoint' : `checkpoint ${state.published}`}`;
  if (here.size !== there.size || here.published !== there.published || here.checkpoint !== there.checkpoint)
    return { kind: 'other', why: `it holds a log of ${described(there)}; this store's has ${described(here)}` };
  // The same tree (the checkpoint's root commits to every leaf). The head of the queue still to be
  // sequenced must be this store's too; rooms copied after the log may have queued duplicates behind it.
  if (queues === undefined) return { kind: 'same' };
  const [mine, theirs] = await Promise.all([
    queues.source.queued(TRANSFER_CHUNK),
    queues.target.queued(TRANSFER_CHUNK),
  ]);
  const key = (r: QueuedReceipt) => `${r.slug}#${r.sequence}#${r.receipt_hash}`;
  const differs = mine.findIndex((r, i) => theirs[i] === undefined || key(theirs[i] as QueuedReceipt) !== key(r));
  if (differs >= 0)
    return { kind: 'other', why: `its log has the same ${described(there)}, but a different queue at item ${differs}` };
  return { kind: 'same' };
}

/** Whether a log holds anything: a leaf, a published checkpoint, a logged room. */
export async function holdsLog(store: MovableLog, state: LogState): Promise<boolean> {
  if (state.size > 0 || state.checkpoint !== null) return true;
  if ((await store.checkpointSizes(-1, 1)).length > 0) return true;
  return (await store.loggedCounts()).size > 0;
}

export interface LogTransferReport {
  leaves: number;
  checkpoints: number;
  cosignatures: number;
  queued: number;
}

/**
 * Copies the source's whole log into the target, whose log must be empty (compareLogs: 'absent').
 * The caller holds the target's log lease (`fence`), so no integrator writes meanwhile; `progress`
 * runs after each part (the caller renews the lease there). On any failure the import is dropped.
 * `chunk`: items per part (tests make it small to cross every page boundary).
 */
export async function copyLog(
  source: Pick<LogStore, 'exportLog'>,
  target: Pick<LogStore, 'importLog'>,
  fence: string,
  { progress = async () => {}, chunk = TRANSFER_CHUNK }: { progress?: () => Promise<void>; chunk?: number } = {},
): Promise<LogTransferReport> {
  const report: LogTransferReport = { leaves: 0, checkpoints: 0, cosignatures: 0, queued: 0 };
  const imported = await target.importLog(fence);
  try {
    for await (const part of source.exportLog(chunk)) {
      await imported.write(part);
      if (part.kind === 'entries') report.leaves += part.entries.length;
      if (part.kind === 'checkpoints') {
        report.checkpoints += part.checkpoints.length;
        for (const checkpoint of part.checkpoints) report.cosignatures += checkpoint.cosignatures.length;
      }
      if (part.kind === 'queue') report.queued += part.receipts.length;
      await progress();
    }
    await imported.finish();
  } catch (error) {
    await imported.abandon().catch(() => {});
    throw error;
  }
  return report;
}
