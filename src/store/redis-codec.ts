/** Rooms, events, receipts and archived decisions as the Redis store writes and reads them. */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { ArchivedDecision, RoomRecord, StoredEvent, StoredReceipt } from './port.js';
import type { Arg } from './redis-calls.js';

/** A room from its hash's fields (version, head, snapshot, next_deadline, revision); null when absent. */
export function recordOf(slug: string, fields: (string | null | undefined)[]): RoomRecord | null {
  const [version, head, snapshot, nextDeadline, revision] = fields;
  if (version === null || version === undefined) return null;
  return {
    slug,
    version: Number(version),
    head: Number(head),
    snapshot: snapshot ?? '',
    next_deadline: nextDeadline ? Number(nextDeadline) : null,
    ...(revision ? { revision } : {}),
  };
}

export function encodeEvents(events: StoredEvent[]): Arg[] {
  const args: Arg[] = [events.length];
  for (const e of events) {
    const stored: StoredEvent = {
      id: e.id,
      seq: e.seq,
      event_type: e.event_type,
      occurred_at: e.occurred_at,
      decision_id: e.decision_id,
      data: e.data,
      actor: e.actor,
    };
    args.push(e.seq, e.id, JSON.stringify(stored));
  }
  return args;
}

/**
 * Archived decisions are written once and read whole, so they are stored deflated: a decision's
 * data repeats its ballots in its seal, and the room's footprint should stay near the history it
 * serves.
 */
export function encodeArchived(archived: ArchivedDecision[]): Arg[] {
  const args: Arg[] = [archived.length];
  for (const a of archived) {
    const stored: ArchivedDecision = { decision_id: a.decision_id, seq: a.seq, data: a.data };
    args.push(a.seq, archivedBytes(JSON.stringify(stored)));
  }
  return args;
}

/** Marks a deflated archive entry (a plain JSON entry, `{`, is read as it is). */
const DEFLATED = Buffer.from([1]);

/** An archive entry's bytes as stored, from its JSON text. */
export function archivedBytes(json: string): Buffer {
  return Buffer.concat([DEFLATED, deflateRawSync(json)]);
}

/** An archive entry's JSON text, from its bytes as stored. */
export function archivedText(stored: Buffer): string {
  return stored[0] === DEFLATED[0] ? inflateRawSync(stored.subarray(1)).toString('utf8') : stored.toString('utf8');
}

export function decodeArchived(stored: Buffer): ArchivedDecision {
  return JSON.parse(archivedText(stored)) as ArchivedDecision;
}

export function encodeReceipts(receipts: StoredReceipt[]): Arg[] {
  const args: Arg[] = [receipts.length];
  for (const r of receipts) {
    const stored: StoredReceipt = {
      sequence: r.sequence,
      decision_id: r.decision_id,
      jws: r.jws,
      receipt_hash: r.receipt_hash,
    };
    args.push(r.sequence, JSON.stringify(stored));
  }
  return args;
}
