/**
 * A room commit on the embedded store (docs/architecture.md, Storage): the version and fence
 * checks, then the room row, events, receipts, archived decisions and idempotency records, written
 * inside the write group's transaction.
 */
import { assertBatchShape, assertContinues, IDEMPOTENCY_TTL_MS } from './common.js';
import { type CommitBatch, type RoomRecord, StoreConflictError } from './port.js';
import type { SqlStatements } from './sqlite-statements.js';

/** Expired idempotency rows are deleted at most this often, during a commit. */
const PURGE_INTERVAL_MS = 60_000;

export class SqliteRoomCommit {
  private lastPurgeAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sql: SqlStatements,
    private readonly clock: () => number,
  ) {}

  /** Writes one room commit; runs inside the group's transaction (sqlite-group-commit.ts). */
  apply(batch: CommitBatch): RoomRecord {
    assertBatchShape(batch);
    const { slug } = batch;
    const row = this.sql.roomPosition.get(slug);
    if (batch.expected_version === 0 ? row !== undefined : row?.version !== batch.expected_version) {
      throw new StoreConflictError(
        `room ${slug} is at version ${row?.version ?? 0}, the commit expected ${batch.expected_version}`,
      );
    }
    if (batch.fence !== undefined) this.assertFence(slug, batch.fence);
    const head = row?.head ?? 0;
    const chainLength = row?.chain_length ?? 0;
    assertContinues(batch, head, chainLength);

    const newHead = head + batch.events.length;
    const newChainLength = chainLength + batch.receipts.length;
    if (row === undefined) {
      // Creation claims the slug too, so it can never be handed out again.
      this.sql.reserveSlug.run(slug, this.clock());
      this.sql.insertRoom.run(slug, newHead, newChainLength, batch.snapshot, batch.next_deadline);
    } else {
      this.sql.updateRoom.run(newHead, newChainLength, batch.snapshot, batch.next_deadline, slug, row.version);
    }
    for (const e of batch.events) {
      this.sql.insertEvent.run(
        slug,
        e.seq,
        e.id,
        e.event_type,
        e.occurred_at,
        e.decision_id,
        JSON.stringify(e.data),
        e.actor,
      );
    }
    for (const r of batch.receipts) {
      this.sql.insertReceipt.run(slug, r.sequence, r.decision_id, r.jws, r.receipt_hash);
    }
    for (const a of batch.archived ?? []) this.sql.insertArchived.run(slug, a.seq, a.decision_id, a.data);
    for (const i of batch.idempotency ?? []) {
      this.sql.upsertIdempotency.run(i.scope, i.fingerprint, i.status, i.body, i.created_at);
    }
    this.purgeExpiredIdempotency();
    if (batch.release_lock && batch.fence !== undefined) this.sql.releaseLock.run(slug, batch.fence);
    return {
      slug,
      version: (row?.version ?? 0) + 1,
      head: newHead,
      snapshot: batch.snapshot,
      next_deadline: batch.next_deadline,
    };
  }

  private assertFence(slug: string, token: string): void {
    const holder = this.sql.lockHolder.get(slug);
    if (!holder || holder.token !== token || holder.expires_at <= Date.now()) {
      throw new StoreConflictError(`the lock token no longer holds room ${slug}`);
    }
  }

  private purgeExpiredIdempotency(): void {
    const now = this.clock();
    if (now - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = now;
    this.sql.purgeIdempotency.run(now - IDEMPOTENCY_TTL_MS);
  }
}
