/**
 * The member endpoint's body (docs/transparency-log.md, The member endpoint): for each position of
 * a room's receipt chain, the receipt there, its leaf index once published, and its label under
 * every position key the service holds with the VRF proof; then the next, unused position, so a
 * member can look for a leaf the service logged but never showed it (a split view).
 */
import type { TransparencyLog } from './log.js';
import { type LogPosition, wireLabel } from './outcome-proofs.js';
import { type PositionLabels, receiptPosition } from './position-labels.js';

export interface RoomReceipt {
  sequence: number;
  jws: string;
  receipt_hash: string;
}

interface PositionRow {
  sequence: number;
  receipt_hash: string | null;
  leaf_index: number | null;
  labels: LogPosition[];
}

export async function roomLogPositions(
  log: TransparencyLog,
  positions: PositionLabels,
  /** The room's URL: what the room's next receipt will sign as svc.room_id. */
  roomId: string,
  receipts: readonly RoomReceipt[],
): Promise<Record<string, unknown>> {
  const keys = positions.all();
  const latest = await log.latest();
  const chain = [...receipts].sort((a, b) => a.sequence - b.sequence);
  const rows: PositionRow[] = await Promise.all(
    chain.map(async (receipt) => {
      // The label is over the receipt's SIGNED room_id and sequence, exactly as the leaf was labelled.
      const position = receiptPosition(receipt.jws);
      return {
        sequence: receipt.sequence,
        receipt_hash: receipt.receipt_hash,
        leaf_index: await log.publishedIndexOf(receipt.receipt_hash, latest),
        labels: keys.map((key) => wireLabel(positions.prove(key, position))),
      };
    }),
  );
  const next = { roomId, sequence: (chain.at(-1)?.sequence ?? 0) + 1 };
  rows.push({
    sequence: next.sequence,
    receipt_hash: null,
    leaf_index: null,
    labels: keys.map((key) => wireLabel(positions.prove(key, next))),
  });
  return { room_id: roomId, log_origin: log.origin, positions: rows };
}
