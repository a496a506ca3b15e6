/** Rules and helpers shared by both store adapters, so they cannot drift apart. */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CommitBatch,
  type IdempotencyRecord,
  type RoomRecord,
  type RoomVersion,
  StoreConflictError,
  StoreUnavailableError,
} from './port.js';

/** Idempotency records are kept 24 h after they are stored (docs/agents.md, The REST loop). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Stored idempotent response bodies start with this (runtime/idempotency-seal.ts); a body without it
 * was written raw by an earlier version and is purged at start (docs/architecture.md, Credentials).
 */
export const SEALED_BODY_PREFIX = 'sealed1.';

export function isIdempotencyExpired(record: Pick<IdempotencyRecord, 'created_at'>, nowMs: number): boolean {
  return nowMs - record.created_at >= IDEMPOTENCY_TTL_MS;
}

/**
 * The room slug an idempotency scope belongs to (`<slug>|<hash>`), or null when the scope names
 * no room (`-|<hash>`) or does not follow the convention.
 */
export function slugOfScope(scope: string): string | null {
  const bar = scope.indexOf('|');
  if (bar <= 0) return null;
  const slug = scope.slice(0, bar);
  return slug === '-' ? null : slug;
}

/** Lock tokens double as fencing values, so they must be unguessable and unique per acquisition. */
export function newLockToken(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Checks what can be checked without reading the store: the batch's events and receipts are
 * consecutive among themselves and event ids are not repeated. Where the batch must start is
 * checked by each adapter against its stored head and chain length, inside the commit.
 */
export function assertBatchShape(batch: CommitBatch): void {
  if (!Number.isInteger(batch.expected_version) || batch.expected_version < 0) {
    throw new StoreConflictError(`invalid expected_version ${batch.expected_version}`);
  }
  const ids = new Set<string>();
  batch.events.forEach((event, i) => {
    const first = batch.events[0]!.seq;
    if (!Number.isInteger(event.seq) || event.seq !== first + i) {
      throw new StoreConflictError(`event seq ${event.seq} breaks the batch's consecutive run`);
    }
    if (ids.has(event.id)) throw new StoreConflictError(`event id ${event.id} repeated in the batch`);
    ids.add(event.id);
  });
  batch.receipts.forEach((receipt, i) => {
    const first = batch.receipts[0]!.sequence;
    if (!Number.isInteger(receipt.sequence) || receipt.sequence !== first + i) {
      throw new StoreConflictError(`receipt sequence ${receipt.sequence} breaks the batch's consecutive run`);
    }
  });
}

/** Throws unless the batch continues a log at `head` and a chain of `chainLength` receipts. */
export function assertContinues(batch: CommitBatch, head: number, chainLength: number): void {
  const firstSeq = batch.events[0]?.seq;
  if (firstSeq !== undefined && firstSeq !== head + 1) {
    throw new StoreConflictError(`events start at seq ${firstSeq} but the room's head is ${head}`);
  }
  const firstSequence = batch.receipts[0]?.sequence;
  if (firstSequence !== undefined && firstSequence !== chainLength + 1) {
    throw new StoreConflictError(`receipts start at ${firstSequence} but the chain holds ${chainLength}`);
  }
}

/**
 * Calls `tryAcquire` until it succeeds or `waitMs` (wall time) has elapsed; it is always tried at
 * least once. Errors from `tryAcquire` (store unavailable) end the wait at once.
 */
export async function acquireWithin(slug: string, waitMs: number, tryAcquire: () => Promise<boolean>): Promise<void> {
  const giveUpAt = Date.now() + waitMs;
  let pause = 5;
  for (;;) {
    if (await tryAcquire()) return;
    const remaining = giveUpAt - Date.now();
    if (remaining <= 0) throw new StoreUnavailableError(`room ${slug} is locked; gave up after ${waitMs} ms`);
    // Jitter keeps waiters from retrying in lockstep.
    await sleep(Math.min(remaining, pause + Math.random() * pause));
    pause = Math.min(pause * 2, 50);
  }
}

/** Whether a stored room is still where a reader last saw it (a missing revision matches a missing one). */
export function isAtVersion(record: Pick<RoomRecord, 'version' | 'revision'>, known: RoomVersion): boolean {
  return record.version === known.version && (record.revision ?? '') === (known.revision ?? '');
}
