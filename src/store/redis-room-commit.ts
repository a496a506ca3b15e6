/**
 * A room commit on Redis (docs/architecture.md, Storage): one script over the room's hash slot that
 * checks the version, revision, fence and continuity and writes everything (with WAIT when replicas
 * are required), then the single-key follow-ups outside the slot.
 */
import { randomUUID } from 'node:crypto';
import { assertBatchShape, IDEMPOTENCY_TTL_MS, slugOfScope } from './common.js';
import { type CommitBatch, type CommittedRoom, type IdempotencyRecord, StoreUnavailableError } from './port.js';
import type { Arg, DeadlineCalls, ScriptCommands, ScriptedRedis } from './redis-calls.js';
import { encodeArchived, encodeEvents, encodeReceipts } from './redis-codec.js';
import { engagementKeys } from './redis-engagement-commands.js';
import { COMPACTED_REPLY } from './redis-compact-scripts.js';
import type { RedisCompaction } from './redis-compaction.js';
import type { RedisKeys } from './redis-keys.js';
import type { RoomLeases } from './redis-room-lease.js';
import type { ExistenceMemo } from './redis-room-reads.js';
import type { RedisLogStore } from './redis-tlog.js';

/** Rooms whose deadline-index entry this process remembers writing; past it the memory starts over. */
const MAX_INDEXED = 10_000;

export class RedisRoomCommits {
  /** Deadline index updates a commit did not wait for (afterCommit). */
  private readonly unawaited = new Set<Promise<void>>();
  /** Per room, the deadline this process last wrote to the index and the room version that commit made. */
  private readonly indexed = new Map<string, { version: number; deadline: number | null }>();

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly key: RedisKeys,
    private readonly calls: DeadlineCalls,
    private readonly clock: () => number,
    private readonly replication: { replicas: number; timeoutMs: number },
    private readonly tlog: RedisLogStore,
    private readonly leases: RoomLeases,
    private readonly memo: ExistenceMemo,
    /**
     * Where the commit script announces each commit: the room's sharded channel, the origin that
     * names this store there, and whether the broadcast channel of earlier versions hears it too.
     */
    private readonly announce: { origin: string; broadcast: boolean },
    private readonly compaction: RedisCompaction,
  ) {}

  async commit(batch: CommitBatch): Promise<CommittedRoom> {
    assertBatchShape(batch);
    const { slug } = batch;
    const records = batch.idempotency ?? [];
    // Records of the room's own scopes live in its hash slot and commit inside the script.
    const inScript = records.filter((record) => slugOfScope(record.scope) === slug);
    const separate = records.filter((record) => slugOfScope(record.scope) !== slug);
    const release = batch.release_lock && batch.fence !== undefined ? batch.fence : null;
    const lingerTtl = release === null ? null : this.leases.lingerTtl(slug, release);
    const args: Arg[] = [
      8 + inScript.length,
      this.key.room(slug),
      this.key.events(slug),
      this.key.eventIds(slug),
      this.key.receipts(slug),
      this.key.lock(slug),
      this.key.archived(slug),
      this.key.lockQueue(slug),
      ...inScript.map((record) => this.key.idempotency(record.scope)),
      engagementKeys(this.key.room(slug)).webhooks,
      batch.expected_version,
      batch.fence ?? '',
      batch.snapshot,
      batch.next_deadline ?? '',
      ...encodeEvents(batch.events),
      ...encodeReceipts(batch.receipts),
      inScript.length,
      ...inScript.flatMap((record) => [JSON.stringify(record), this.idempotencyTtl(record)]),
      ...encodeArchived(batch.archived ?? []),
      batch.expected_revision ?? '',
      randomUUID(),
      // A lock this process took lingers after the commit unless someone waits (redis-room-lease.ts).
      release === null ? '' : lingerTtl === null ? '1' : '2',
      this.key.lockWakes,
      slug,
      lingerTtl ?? '',
      // The script announces the commit itself: the other processes hear it in this same round trip.
      this.key.roomCommits(slug),
      this.announce.origin,
      this.announce.broadcast ? this.key.commits : '',
    ];
    const sentAt = performance.now();
    let version: number;
    let head: number;
    let revision: string;
    let kept: number;
    let subscribed: number;
    try {
      [version, head, revision, kept, subscribed] = await this.commitExpanded(slug, args);
    } catch (error) {
      if (batch.fence !== undefined) this.leases.lost(slug, batch.fence);
      throw error;
    }
    if (release !== null) this.leases.committed(slug, release, sentAt, { version, revision }, kept === 1);
    this.memo.seen(slug, true);
    if (batch.events.some((event) => event.event_type === 'room.concluded')) this.compaction.schedule(slug);
    await this.afterCommit(batch, version, separate);
    return {
      slug,
      version,
      head,
      snapshot: batch.snapshot,
      next_deadline: batch.next_deadline,
      revision,
      subscribed: subscribed === 1,
    };
  }

  /**
   * The commit script, on the expanded layout: a compacted room (redis-compaction.ts) is refused by the
   * script before it writes anything, expanded, and committed again. The expansion changes neither
   * version nor revision, so the batch's checks hold as they were.
   */
  private async commitExpanded(slug: string, args: Arg[]): Promise<[number, number, string, number, number]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.calls.call(() =>
          this.replication.replicas > 0 ? this.commitReplicated(args) : this.redis.conclaveCommit(...args),
        );
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith(COMPACTED_REPLY)) || attempt === 3) throw error;
        await this.compaction.expand(slug);
      }
    }
  }

  /**
   * The commit script and WAIT in one pipeline: on a Cluster both go to the room's master, so WAIT
   * counts the replicas of exactly that write. Too few replicas within the timeout is a failure the
   * caller answers with 503; the write may still have landed, and the client's retry with its
   * Idempotency-Key gets the stored result.
   */
  private async commitReplicated(args: Arg[]): Promise<[number, number, string, number, number]> {
    const { replicas, timeoutMs } = this.replication;
    const pipeline = this.redis.pipeline() as unknown as ScriptCommands & {
      wait(replicas: number, timeout: number): unknown;
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    pipeline.conclaveCommit(...args);
    pipeline.wait(replicas, timeoutMs);
    const replies = await pipeline.exec();
    const [commitError, committed] = replies?.[0] ?? [new Error('no reply to the commit')];
    if (commitError) throw commitError;
    const [waitError, acknowledged] = replies?.[1] ?? [new Error('no reply to WAIT')];
    if (waitError) throw waitError;
    if (Number(acknowledged) < replicas) {
      throw new StoreUnavailableError(
        `the write reached ${Number(acknowledged)} of the ${replicas} Redis replicas required within ${timeoutMs} ms`,
      );
    }
    return committed as [number, number, string, number, number];
  }

  /**
   * The single-key follow-ups of a successful commit. They run after the room script because they
   * live outside the room's hash slot, and they are best effort: the commit is already durable
   * and acknowledged. That is safe because the deadline index is only an optimisation (a room's
   * due work is resolved lazily whenever it is touched, and dueRooms repairs stale entries), the
   * slug was normally reserved before creation, and a lost room-less idempotency record only
   * means a retry executes afresh. The deadline index update is not even awaited: the answer need
   * not wait one more round trip for an optimisation, and this process's later commands (its next
   * update of the same entry included) follow it on the same connection.
   */
  private async afterCommit(batch: CommitBatch, version: number, separateRecords: IdempotencyRecord[]): Promise<void> {
    const { slug } = batch;
    const indexed = this.indexDeadline(batch, version);
    if (indexed) {
      // Not awaited here, but close() lets it land (a clean shutdown keeps the index whole).
      this.unawaited.add(indexed);
      void indexed.finally(() => this.unawaited.delete(indexed));
    }
    await Promise.all([
      // The log's queue (redis-tlog.ts): a receipt lost here is found by the integrator's sweep.
      batch.receipts.length > 0
        ? this.calls.bestEffort(() =>
            this.tlog.enqueue(
              batch.receipts.map((r) => ({ slug, sequence: r.sequence, jws: r.jws, receipt_hash: r.receipt_hash })),
            ),
          )
        : undefined,
      version === 1 ? this.calls.bestEffort(() => this.redis.sadd(this.key.slugs, slug)) : undefined,
      ...separateRecords.map((record) =>
        this.calls.bestEffort(() =>
          this.redis.set(this.key.idempotency(record.scope), JSON.stringify(record), 'PX', this.idempotencyTtl(record)),
        ),
      ),
    ]);
  }

  /**
   * The room's deadline-index entry brought to the commit's next deadline, or nothing to do: when
   * this process wrote the entry with the same deadline at the very version this commit followed,
   * nobody has committed to the room since (the version check would have refused this commit), so
   * the entry still says it. Most commits (a ballot, a message) leave the deadline where it was.
   */
  private indexDeadline(batch: CommitBatch, version: number): Promise<void> | null {
    const { slug, next_deadline: deadline } = batch;
    const last = this.indexed.get(slug);
    if (last && last.version === batch.expected_version && last.deadline === deadline) {
      last.version = version;
      return null;
    }
    this.indexed.delete(slug);
    return this.calls.bestEffort(async () => {
      if (deadline === null) await this.redis.zrem(this.key.deadlines(slug), slug);
      else await this.redis.zadd(this.key.deadlines(slug), deadline, slug);
      // Only a write Redis answered is remembered: a lost one is sent again by the next commit.
      if (this.indexed.size >= MAX_INDEXED) this.indexed.clear();
      this.indexed.set(slug, { version, deadline });
    });
  }

  private idempotencyTtl(record: IdempotencyRecord): number {
    return Math.max(1, record.created_at + IDEMPOTENCY_TTL_MS - this.clock());
  }

  /** Lets the index updates not yet awaited land (a clean shutdown keeps the index whole). */
  async settle(): Promise<void> {
    await Promise.all([...this.unawaited]);
  }
}
