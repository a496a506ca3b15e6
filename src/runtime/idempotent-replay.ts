/**
 * Idempotency on the write path (docs/architecture.md, The write path): the record a keyed turn
 * commits with its batch, and the stored result a repeated request is answered with.
 */
import { type ProtocolError, protocolError } from '../errors.js';
import type { IdempotencyRecord, RoomStore } from '../store/port.js';
import type { Clock } from './clock.js';
import { isSealedBody } from './idempotency-seal.js';
import type { IdempotencySpec, TurnResult } from './turn-types.js';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The stored result of an earlier request with the same key, or null when there is none to replay. */
export async function replay(
  store: RoomStore,
  clock: Clock,
  idempotency: IdempotencySpec,
): Promise<TurnResult<unknown> | null> {
  const record = await store.idempotency(idempotency.scope);
  if (!record || clock.now() - record.created_at > IDEMPOTENCY_TTL_MS) return null;
  return replayOf(record, idempotency);
}

export function recordOf(idempotency: IdempotencySpec, result: unknown, now: number): IdempotencyRecord {
  return {
    scope: idempotency.scope,
    fingerprint: idempotency.fingerprint,
    status: 200,
    body: idempotency.seal.seal(JSON.stringify(result), result),
    created_at: now,
  };
}

/** The stored result, or null for a record written raw by an earlier version (it is not replayed). */
export function replayOf(record: IdempotencyRecord, idempotency: IdempotencySpec): TurnResult<unknown> | null {
  if (!isSealedBody(record.body)) return null;
  if (record.fingerprint !== idempotency.fingerprint) throw idempotencyConflict();
  const body = idempotency.seal.open(record.body);
  return body === null ? null : { result: JSON.parse(body) as unknown, replayed: true };
}

export function idempotencyConflict(): ProtocolError {
  return protocolError(
    'idempotency.conflict',
    'This Idempotency-Key was already used with a different request body for this operation. Use a new key for a new request, or resend the original body to get the original result.',
    { hint: 'Generate a fresh Idempotency-Key for each distinct request.' },
  );
}
