/**
 * The room an outcome's receipts were signed for (the first receipt's `svc.room_id`), for tests that
 * verify a chain after it moved: restored from a backup, migrated to Redis, read from another process.
 * Their subject is that the chain survived intact; the room URL it was signed under may name the
 * service that wrote it, not the one serving it now. Binding verification to the room a reader asks
 * about is tested against forgeries in test/client/verify-bound.test.ts and test/cli/verify-bound.test.ts.
 */
import { decodeCompact } from '../../src/receipts/compact.js';

export function roomSignedFor(outcome: any): string {
  const first = [...(outcome?.decisions ?? []), outcome?.conclusion].find(
    (entry) => typeof entry?.receipt_jws === 'string',
  );
  if (!first) throw new Error('the outcome holds no receipt to read a room from');
  const room = (decodeCompact(first.receipt_jws).payload as any).svc?.room_id;
  if (typeof room !== 'string') throw new Error('the first receipt names no room');
  return room;
}
