/**
 * What this process knows from holding a room's Redis lock (docs/architecture.md, "One room, many
 * processes"): while it holds the lock nobody else can commit to the room (the commit script fences
 * on the token), so the room is still at the version this process last took or committed it at.
 * Three round trips of a busy room's requests follow from that, and the Redis store skips them:
 *
 * - **Lingering.** A commit that would let the lock go keeps it instead when nobody waits for it
 *   (the commit script decides, in the same round trip, and renews it by its TTL). A batch of this
 *   process while the lease lasts reuses it without asking Redis (with a renewal sent alongside,
 *   unawaited, once less than half the TTL is left). Another process that wants the room joins the
 *   line and says so on the wake channel; a lingering holder that hears it lets go at once (and the
 *   commit script lets go of a lock someone waits for, as before), so the line still moves in turn.
 * - **No release of an unused lock.** A lingering lock nobody reuses or asks for is not let go: it
 *   lapses in Redis with its TTL, and this process forgets it then. Letting it go would cost a
 *   round trip per commit of every room written only now and then (a room a second across a thousand
 *   rooms paid acquire, commit and release); anyone who wants it meanwhile says so and gets it at
 *   once, as above, and a dead process's locks lapse the same way either way.
 * - **Reads under the lock.** A freshness check (`loadIfChanged`) or an existence check for a room
 *   this process holds the lock of, at the version it holds it at, is answered here.
 *
 * All three rest on the lock not having lapsed, which this process judges on its own monotonic clock: a
 * lease counts until the TTL measured from when its acquire, renewal or commit was *sent* (Redis
 * starts the TTL later, when it runs the command), less SAFETY_MS. A process that stalls past that
 * (GC, an overloaded event loop) finds its lease over and asks Redis again. What stays out of reach
 * is a lock that Redis itself loses early (a failover to a replica that had not received it):
 * for at most that remaining TTL a read here may miss another process's commit, which its own next
 * commit then finds as a fencing conflict — the same window fencing already accepts for writes.
 */
import type { RoomVersion } from './port.js';

/** Subtracted from every lease's TTL: the lock is trusted this much less long than Redis keeps it. */
export const SAFETY_MS = 300;
/**
 * A room another process asked for (its line was woken, or someone joined it) is not lingered on for
 * this long: its writes arrive at several processes (a balancer without room affinity), where each
 * linger would only make the next process ask twice.
 */
export const CONTENDED_MS = 5_000;

interface Lease {
  token: string;
  ttlMs: number;
  version: RoomVersion | null;
  /** performance.now() until which the lock is surely still ours. */
  validUntil: number;
  /**
   * Set while the lock lingers after a commit (no batch holds it): fires once the lock has surely
   * lapsed in Redis, and only forgets it here.
   */
  linger: ReturnType<typeof setTimeout> | null;
}

export class RoomLeases {
  private readonly leases = new Map<string, Lease>();
  /** Rooms other processes asked for lately, until when (see CONTENDED_MS). */
  private readonly contended = new Map<string, number>();

  /** `release` lets a lingering lock go in Redis (compare-and-delete); never throws. */
  constructor(
    private readonly release: (slug: string, token: string) => Promise<void>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The lock was taken (the acquire was sent at `sentAt`) with the room at `found`. */
  taken(slug: string, token: string, ttlMs: number, sentAt: number, found: RoomVersion | null): void {
    this.drop(slug);
    this.leases.set(slug, { token, ttlMs, version: found, validUntil: sentAt + ttlMs - SAFETY_MS, linger: null });
  }

  /** A renewal sent at `sentAt` succeeded (`ok`), or found the lock lost. */
  renewed(slug: string, token: string, sentAt: number, ok: boolean): void {
    const lease = this.of(slug, token);
    if (!lease) return;
    if (ok) lease.validUntil = Math.max(lease.validUntil, sentAt + lease.ttlMs - SAFETY_MS);
    else this.drop(slug);
  }

  /**
   * The TTL to keep the lock for after a commit under `token` (the commit script renews it by that),
   * or null to let it go with the commit: not ours, or a room other processes asked for lately.
   */
  lingerTtl(slug: string, token: string): number | null {
    const lease = this.of(slug, token);
    if (!lease) return null;
    const until = this.contended.get(slug);
    if (until !== undefined && until > this.now()) return null;
    if (until !== undefined) this.contended.delete(slug);
    return lease.ttlMs;
  }

  /**
   * A commit under `token`, sent at `sentAt`, stored `version`; `kept` when the script kept the lock
   * (renewed by the TTL) instead of letting it go: it lingers until reused, wanted, or lapsed.
   */
  committed(slug: string, token: string, sentAt: number, version: RoomVersion, kept: boolean): void {
    const lease = this.of(slug, token);
    if (!lease) return;
    if (!kept) {
      this.drop(slug);
      return;
    }
    lease.version = version;
    lease.validUntil = sentAt + lease.ttlMs - SAFETY_MS;
    this.lingerOn(slug, lease);
  }

  /** A commit or anything else under `token` failed: the lock may be gone; forget it here. */
  lost(slug: string, token: string): void {
    if (this.of(slug, token)) this.drop(slug);
  }

  /** The holder let the lock go itself. */
  released(slug: string, token: string): void {
    this.lost(slug, token);
  }

  /**
   * The lingering lock of the room, handed to a new batch while the lease surely holds. `renew` is
   * set when less than half its TTL remains: the batch's own renewals start a third of the TTL in,
   * so the taker renews at once (unawaited: the commit follows it on the same connection, and its
   * fence refuses the batch if the lock was lost). Null when nothing lingers, or when the lease is
   * over (then a lock Redis may still hold for a moment is let go first, so asking again finds it free).
   */
  reuse(slug: string): { token: string; found: RoomVersion | null; renew: boolean } | null {
    const lease = this.leases.get(slug);
    if (!lease?.linger) return null;
    clearTimeout(lease.linger);
    lease.linger = null;
    const remaining = lease.validUntil - this.now();
    if (remaining <= 0) {
      void this.letGo(slug, lease);
      return null;
    }
    return { token: lease.token, found: lease.version, renew: remaining < lease.ttlMs / 2 };
  }

  /**
   * Another process waits for the room (it joined the line, or a line was woken): a lingering lock
   * goes at once, a held one goes with its commit, and the room is not lingered on for CONTENDED_MS.
   */
  wanted(slug: string): void {
    if (this.contended.size >= 10_000 && !this.contended.has(slug)) this.contended.clear();
    this.contended.set(slug, this.now() + CONTENDED_MS);
    const lease = this.leases.get(slug);
    if (lease?.linger) this.letGo(slug, lease);
  }

  /** True when this process holds the room's lock, surely still, with the room at `known`. */
  current(slug: string, known: RoomVersion): boolean {
    const lease = this.valid(slug);
    return (
      lease !== null &&
      lease.version !== null &&
      lease.version.version === known.version &&
      (lease.version.revision ?? '') === (known.revision ?? '')
    );
  }

  /** True when this process surely holds the lock of a room that exists. */
  exists(slug: string): boolean {
    return this.valid(slug)?.version != null;
  }

  /** Lets every lingering lock go (shutdown); the returned promise settles when Redis has them. */
  async releaseAll(): Promise<void> {
    const lingering = [...this.leases].filter(([, lease]) => lease.linger !== null);
    await Promise.all(lingering.map(([slug, lease]) => this.letGo(slug, lease)));
  }

  /** Rooms whose lock this process holds or lets linger (for tests). */
  get size(): number {
    return this.leases.size;
  }

  private valid(slug: string): Lease | null {
    const lease = this.leases.get(slug);
    return lease && this.now() < lease.validUntil ? lease : null;
  }

  private of(slug: string, token: string): Lease | null {
    const lease = this.leases.get(slug);
    return lease?.token === token ? lease : null;
  }

  private lingerOn(slug: string, lease: Lease): void {
    if (lease.linger) clearTimeout(lease.linger);
    // Until Redis has surely let the lock lapse (the lease's end plus the margin it was trusted less):
    // until then a wake for the room still lets it go at once (wanted), after it there is nothing to let go.
    const ms = Math.max(0, lease.validUntil + SAFETY_MS - this.now());
    lease.linger = setTimeout(() => this.forget(slug, lease), ms);
    lease.linger.unref();
  }

  /** The lease is over and its lock lapsed in Redis: nothing to release. */
  private forget(slug: string, lease: Lease): void {
    lease.linger = null;
    if (this.leases.get(slug) === lease) this.leases.delete(slug);
  }

  private letGo(slug: string, lease: Lease): Promise<void> {
    if (lease.linger) clearTimeout(lease.linger);
    lease.linger = null;
    if (this.leases.get(slug) === lease) this.leases.delete(slug);
    return this.release(slug, lease.token);
  }

  private drop(slug: string): void {
    const lease = this.leases.get(slug);
    if (!lease) return;
    if (lease.linger) {
      // Replaced while lingering (a new lock under another token): the old one still goes in Redis.
      void this.letGo(slug, lease);
      return;
    }
    this.leases.delete(slug);
  }
}
