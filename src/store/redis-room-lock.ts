/**
 * The Redis room lock, fair and notified (docs/architecture.md, "One room, many processes").
 *
 * The lock itself is what it always was: one key holding the holder's random token (`SET NX PX`,
 * renewed by compare-and-expire, released by compare-and-delete), which the commit script checks as
 * the fence. Around it, a line: a process that finds the room locked joins the room's queue (a list
 * of tokens, with a lease per token in a hash) and is woken by a message on one channel when the
 * lock is let go, instead of polling with a backoff. The lock is taken only by the queue's head (or
 * by anyone while the queue is empty), so a process that keeps writing a room cannot take it again
 * and again while another waits: before, the releasing process's next lock went out right behind its
 * release on the same connection, and a poller could starve until its 3 s wait ran out (a 503).
 *
 * Crash safety is unchanged: a dead holder's lock lapses with its TTL, and a dead waiter's lease
 * (renewed by every try, at least every WAITER_POLL_MS) lapses too, after which the next try by
 * anyone drops it from the head of the line. A lost wake only costs one poll interval.
 */
import type { RoomRecord, RoomVersion } from './port.js';

/** A waiter tries again at least this often even without a wake (lost message, lapsed holder). */
export const WAITER_POLL_MS = 200;
/**
 * A waiter that has not tried for this long is presumed gone and loses its place: as long as a dead
 * holder keeps the lock (the registry's 1.5 s TTL), and several polls long, so a process whose event
 * loop lags under load keeps its place.
 */
export const WAITER_LEASE_MS = 1_500;

/**
 * KEYS: lock, room hash, queue (list of tokens), leases (hash token → epoch ms), all one hash slot.
 * ARGV: token, lock ttl ms, waiter lease ms, what the caller has cached ('' = send nothing, '-' =
 * nothing cached: send the room, else its version), the cached revision, the wake channel, the slug,
 * and '1' for a caller that will not wait (it tries once: it never joins the line nor wakes anyone).
 * Drops waiters whose lease lapsed from the head of the line; takes the lock when it is free and the
 * line is empty or headed by this token. Taken: { 1, version, revision } (version nil: no room), plus
 * the fields load() reads when the room is not what the caller has cached — the lock and the load in
 * one round trip. Not taken: joins the line (once) and renews this token's lease; returns 0. Joining
 * the line of a held lock says so on the wake channel: a holder that lets the lock linger after its
 * commit (redis-room-lease.ts) hears it and lets go (waiters hearing it just try again).
 */
export const FAIR_ACQUIRE_SCRIPT = `
local lock, room, queue, leases = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, lease = ARGV[1], tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local head = redis.call('LINDEX', queue, 0)
while head and head ~= token and tonumber(redis.call('HGET', leases, head) or '0') <= now do
  redis.call('LPOP', queue)
  redis.call('HDEL', leases, head)
  head = redis.call('LINDEX', queue, 0)
end
if (not head or head == token) and redis.call('SET', lock, token, 'PX', ARGV[2], 'NX') then
  if head == token then redis.call('LPOP', queue) end
  redis.call('HDEL', leases, token)
  local stored = redis.call('HMGET', room, 'version', 'revision')
  local known = ARGV[4]
  if stored[1] and known ~= '' and (known == '-' or tonumber(stored[1]) ~= tonumber(known) or (stored[2] or '') ~= ARGV[5]) then
    return { 1, stored[1], stored[2], redis.call('HMGET', room, 'version', 'head', 'snapshot', 'next_deadline', 'revision', 'compacted') }
  end
  return { 1, stored[1], stored[2] }
end
if ARGV[8] == '1' then return 0 end
if not redis.call('HGET', leases, token) then
  redis.call('RPUSH', queue, token)
  if redis.call('EXISTS', lock) == 1 then redis.call('PUBLISH', ARGV[6], ARGV[7]) end
end
redis.call('HSET', leases, token, now + lease)
redis.call('PEXPIRE', queue, lease * 2)
redis.call('PEXPIRE', leases, lease * 2)
return 0
`;

/**
 * KEYS: lock, queue. ARGV: token, wake channel, slug. Deletes the lock only while it still holds our
 * token, and wakes the line if anyone stands in it. Returns 1 when released.
 */
export const FAIR_RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('LLEN', KEYS[2]) > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return 1
`;

/**
 * KEYS: lock, queue, leases. ARGV: token, wake channel, slug. A waiter that gives up leaves the line;
 * if the lock is free and others still wait, the new head is woken (it may have been behind us).
 */
export const LEAVE_LINE_SCRIPT = `
redis.call('LREM', KEYS[2], 0, ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('LLEN', KEYS[2]) > 0 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
`;

/** What the caller has cached, as the acquire script's ARGV (see FAIR_ACQUIRE_SCRIPT). */
export function knownArgs(known: RoomVersion | null | undefined): [string, string] {
  if (known === undefined) return ['', ''];
  if (known === null) return ['-', ''];
  return [String(known.version), known.revision ?? ''];
}

/** The acquire script's reply, read: null when not taken. */
export function readAcquired(
  slug: string,
  reply: 0 | [number, string | null, string | null, (string | null)[]?],
  recordOf: (slug: string, fields: (string | null)[]) => RoomRecord | null,
): { found: RoomVersion | null; loaded?: RoomRecord | null } | null {
  if (reply === 0) return null;
  const [, version, revision, fields] = reply;
  const found = version === null ? null : { version: Number(version), ...(revision ? { revision } : {}) };
  return fields ? { found, loaded: recordOf(slug, fields) } : { found };
}

/**
 * Wakes this process's waiters when a room's lock is let go. One subscription per process (every
 * process hears every room's wakes, as with the commit notices); waiters register before they try, so
 * a wake that lands between their failed try and their sleep is not missed.
 */
export class LockWakes {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Call with each message heard on the wake channel. */
  heard(slug: string): void {
    const wakers = this.waiting.get(slug);
    if (!wakers) return;
    this.waiting.delete(slug);
    for (const wake of wakers) wake();
  }

  /** Starts listening for the room's next wake; `sleep` resolves on it or after `ms`, whichever first. */
  arm(slug: string): { sleep(ms: number): Promise<void>; disarm(): void } {
    let woken = false;
    let resolveSleep: (() => void) | null = null;
    const wake = () => {
      woken = true;
      resolveSleep?.();
    };
    const wakers = this.waiting.get(slug) ?? new Set<() => void>();
    this.waiting.set(slug, wakers);
    wakers.add(wake);
    const disarm = () => {
      const current = this.waiting.get(slug);
      current?.delete(wake);
      if (current?.size === 0) this.waiting.delete(slug);
    };
    return {
      disarm,
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          if (woken) return resolve();
          const timer = setTimeout(() => {
            disarm();
            resolve();
          }, ms);
          resolveSleep = () => {
            clearTimeout(timer);
            resolve();
          };
        }),
    };
  }
}
