/**
 * Taking a room's lock on Redis in its turn (redis-room-lock.ts; docs/architecture.md, "One room,
 * many processes"): tried at once, then again on each wake or poll, until the wait runs out.
 */
import { newLockToken } from './common.js';
import { type RoomLock, type RoomRecord, type RoomVersion, StoreUnavailableError } from './port.js';
import type { DeadlineCalls, ScriptedRedis } from './redis-calls.js';
import { recordOf } from './redis-codec.js';
import type { RedisKeys } from './redis-keys.js';
import type { RoomLeases } from './redis-room-lease.js';
import type { ExistenceMemo } from './redis-room-reads.js';
import { knownArgs, LockWakes, readAcquired, WAITER_LEASE_MS, WAITER_POLL_MS } from './redis-room-lock.js';

export class RedisLockTaker {
  private readonly wakes = new LockWakes();

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly key: RedisKeys,
    private readonly calls: DeadlineCalls,
    private readonly leases: RoomLeases,
    private readonly memo: ExistenceMemo,
    /** A compacted room's record, read from its compact value (the lock script cannot decode it). */
    private readonly loadCompacted: (slug: string) => Promise<RoomRecord | null>,
  ) {}

  /** A let-go lock's wake, heard on the store's subscribed connection. */
  heard(slug: string): void {
    this.wakes.heard(slug);
  }

  /**
   * Takes the room's lock in its turn (redis-room-lock.ts): tried at once, then again on each wake
   * or every WAITER_POLL_MS, until `waitMs` has passed; a waiter that gives up leaves the line.
   * With no wait (`waitMs` ≤ 0: the transparency log's lease, polled by every process) it is tried
   * once and the line is never joined: standing in it for no time would only wake the holder and
   * every other process, and then leave again, on every poll.
   */
  async lock(slug: string, ttlMs: number, waitMs: number, known?: RoomVersion | null): Promise<RoomLock> {
    // The lock this process let linger after its last commit on the room: no round trip to wait for.
    const reused = this.leases.reuse(slug);
    if (reused) {
      const lock = this.held(slug, reused.token, ttlMs, reused.found);
      // Renewed alongside the batch, not before it: the commit's fence settles whether it held.
      if (reused.renew) void lock.renew();
      return lock;
    }
    const token = newLockToken();
    const keys = [this.key.lock(slug), this.key.room(slug), this.key.lockQueue(slug), this.key.lockLeases(slug)];
    const [knownVersion, knownRevision] = knownArgs(known);
    const giveUpAt = Date.now() + waitMs;
    const tryOnce = waitMs <= 0 ? '1' : '';
    let taken: ReturnType<typeof readAcquired> = null;
    let sentAt = 0;
    for (;;) {
      const wake = this.wakes.arm(slug);
      try {
        sentAt = performance.now();
        const reply = await this.calls.call(() =>
          this.redis.conclaveAcquireLock(
            ...keys,
            token,
            ttlMs,
            WAITER_LEASE_MS,
            knownVersion,
            knownRevision,
            this.key.lockWakes,
            slug,
            tryOnce,
          ),
        );
        taken = readAcquired(slug, reply, recordOf);
        if (taken && reply !== 0 && reply[3]?.[5]) taken.loaded = await this.loadCompacted(slug);
        if (taken) break;
      } catch (error) {
        wake.disarm();
        if (!tryOnce) await this.leaveLine(slug, token);
        throw error;
      }
      const remaining = giveUpAt - Date.now();
      if (remaining <= 0) {
        wake.disarm();
        if (!tryOnce) await this.leaveLine(slug, token);
        throw new StoreUnavailableError(`room ${slug} is locked; gave up after ${waitMs} ms`);
      }
      await wake.sleep(Math.min(remaining, WAITER_POLL_MS));
    }
    this.leases.taken(slug, token, ttlMs, sentAt, taken.found);
    if (taken.found !== null) this.memo.seen(slug, true);
    return this.held(slug, token, ttlMs, taken.found, taken.loaded);
  }

  /** The handle of a lock this process holds under `token`. */
  private held(
    slug: string,
    token: string,
    ttlMs: number,
    found: RoomVersion | null,
    loaded?: RoomRecord | null,
  ): RoomLock {
    const key = this.key.lock(slug);
    return {
      slug,
      token,
      found,
      ...(loaded !== undefined ? { loaded } : {}),
      renew: async () => {
        const sentAt = performance.now();
        let ok = false;
        try {
          ok = (await this.redis.conclaveRenewLock(key, token, ttlMs)) === 1;
        } catch {
          ok = false;
        }
        this.leases.renewed(slug, token, sentAt, ok);
        return ok;
      },
      release: () => {
        this.leases.released(slug, token);
        return this.releaseLock(slug, token);
      },
    };
  }

  /** Compare-and-delete of the room's lock, waking its line; never throws. */
  releaseLock(slug: string, token: string): Promise<void> {
    return this.calls.bestEffort(() =>
      this.redis.conclaveReleaseLock(this.key.lock(slug), this.key.lockQueue(slug), token, this.key.lockWakes, slug),
    );
  }

  /** A waiter that gives up leaves the room's line at once rather than when its lease lapses. */
  private leaveLine(slug: string, token: string): Promise<void> {
    return this.calls.bestEffort(() =>
      this.redis.conclaveLeaveLine(
        this.key.lock(slug),
        this.key.lockQueue(slug),
        this.key.lockLeases(slug),
        token,
        this.key.lockWakes,
        slug,
      ),
    );
  }
}
