/**
 * The bookkeeping of the room locks a process holds (src/store/redis-room-lease.ts), on an injected
 * clock: when holding a lock may answer a read, when a lingering lock is handed to the next batch, let
 * go or left to lapse, and that nothing is trusted past the lock's TTL less the safety margin.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONTENDED_MS, RoomLeases, SAFETY_MS } from '../../../src/store/redis-room-lease.js';

const TTL = 1_500;
const at = (version: number) => ({ version, revision: `r${version}` });

function leasesAt(): { leases: RoomLeases; released: string[]; clock: { now: number } } {
  const clock = { now: 1_000 };
  const released: string[] = [];
  const leases = new RoomLeases(
    async (slug, token) => {
      released.push(`${slug}/${token}`);
    },
    () => clock.now,
  );
  return { leases, released, clock };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('room leases', () => {
  it('answer reads while the lock is held at the version asked about, and only until TTL less the margin', () => {
    const { leases, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(3));
    expect(leases.current('r', at(3))).toBe(true);
    expect(leases.exists('r')).toBe(true);
    expect(leases.current('r', at(2))).toBe(false);
    expect(leases.current('r', { version: 3, revision: 'other' })).toBe(false);
    expect(leases.current('s', at(3))).toBe(false);
    clock.now += TTL - SAFETY_MS - 1;
    expect(leases.current('r', at(3))).toBe(true);
    clock.now += 1;
    expect(leases.current('r', at(3))).toBe(false);
    expect(leases.exists('r')).toBe(false);
  });

  it('count from when the acquire was sent, not from when its answer came', () => {
    const { leases, clock } = leasesAt();
    const sentAt = clock.now;
    clock.now += 1_000; // the answer took a second (an overloaded event loop)
    leases.taken('r', 't1', TTL, sentAt, at(1));
    expect(leases.current('r', at(1))).toBe(true);
    clock.now = sentAt + TTL - SAFETY_MS;
    expect(leases.current('r', at(1))).toBe(false);
  });

  it('a lock taken on no room proves nothing', () => {
    const { leases, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, null);
    expect(leases.exists('r')).toBe(false);
    expect(leases.current('r', at(0))).toBe(false);
  });

  it('renewals extend the lease; a failed one ends it', () => {
    const { leases, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    clock.now += 1_000;
    leases.renewed('r', 't1', clock.now, true);
    clock.now += 1_000;
    expect(leases.current('r', at(1))).toBe(true);
    leases.renewed('r', 'someone-else', clock.now, false);
    expect(leases.current('r', at(1))).toBe(true);
    leases.renewed('r', 't1', clock.now, false);
    expect(leases.current('r', at(1))).toBe(false);
  });

  it('a kept commit lingers: the next batch reuses the lock at the committed version, with no release', () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    leases.committed('r', 't1', clock.now, at(2), true);
    expect(leases.current('r', at(2))).toBe(true);
    expect(leases.current('r', at(1))).toBe(false);
    expect(leases.reuse('r')).toEqual({ token: 't1', found: at(2), renew: false });
    // Reused, it is held by a batch again: no lingering timer lets it go meanwhile.
    vi.advanceTimersByTime(TTL * 2);
    expect(released).toEqual([]);
    expect(leases.reuse('r')).toBeNull();
  });

  it('a lingering lock nobody reuses or wants is never released: it is forgotten once Redis has let it lapse', () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    leases.committed('r', 't1', clock.now, at(2), true);
    // Redis keeps it a TTL from the commit; this process trusts it that long less the margin.
    clock.now += TTL - SAFETY_MS - 1;
    expect(leases.current('r', at(2))).toBe(true);
    clock.now += 1;
    expect(leases.current('r', at(2))).toBe(false);
    vi.advanceTimersByTime(TTL - 1);
    expect(leases.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(leases.size).toBe(0);
    expect(released).toEqual([]);
    expect(leases.reuse('r')).toBeNull();
  });

  it('another process that wants the room gets a lingering lock at once; a held one goes with its commit', () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    expect(leases.lingerTtl('r', 't1')).toBe(TTL);
    expect(leases.lingerTtl('r', 'not-ours')).toBeNull();
    leases.committed('r', 't1', clock.now, at(2), true);
    leases.wanted('r');
    expect(released).toEqual(['r/t1']);
    expect(leases.reuse('r')).toBeNull();
    expect(leases.size).toBe(0);
  });

  it('a room other processes asked for lately is not lingered on (no affinity: it would make them ask twice)', () => {
    const { leases, clock } = leasesAt();
    leases.wanted('r');
    leases.taken('r', 't1', TTL, clock.now, at(1));
    expect(leases.lingerTtl('r', 't1')).toBeNull();
    expect(leases.lingerTtl('s', 't1')).toBeNull();
    clock.now += CONTENDED_MS;
    leases.renewed('r', 't1', clock.now, true);
    expect(leases.lingerTtl('r', 't1')).toBe(TTL);
  });

  it('a commit that let the lock go (someone waited) or failed ends the lease', () => {
    const { leases, released, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    leases.committed('r', 't1', clock.now, at(2), false);
    expect(leases.current('r', at(2))).toBe(false);
    leases.taken('r', 't2', TTL, clock.now, at(2));
    leases.lost('r', 't2');
    expect(leases.current('r', at(2))).toBe(false);
    expect(released).toEqual([]);
  });

  it('a lingering lock with less than half its TTL left is reused with a renewal; one past its lease is let go', () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    const sentAt = clock.now;
    leases.taken('r', 't1', TTL, sentAt, at(1));
    leases.committed('r', 't1', sentAt, at(2), true);
    clock.now += TTL / 2 - SAFETY_MS + 1;
    expect(leases.reuse('r')).toEqual({ token: 't1', found: at(2), renew: true });
    expect(released).toEqual([]);
    // Committed again, then left until its lease is over (the lock may still be in Redis a moment).
    leases.committed('r', 't1', clock.now, at(3), true);
    clock.now += TTL - SAFETY_MS;
    expect(leases.reuse('r')).toBeNull();
    expect(released).toEqual(['r/t1']);
    expect(leases.size).toBe(0);
  });

  it('a lingering lock is let go at once when wanted, however late in its lease', () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    leases.taken('r', 't1', TTL, clock.now, at(1));
    leases.committed('r', 't1', clock.now, at(2), true);
    clock.now += TTL - SAFETY_MS + 100;
    vi.advanceTimersByTime(TTL - SAFETY_MS + 100);
    leases.wanted('r');
    expect(released).toEqual(['r/t1']);
  });

  it('releaseAll lets every lingering lock go (shutdown)', async () => {
    vi.useFakeTimers();
    const { leases, released, clock } = leasesAt();
    for (const slug of ['a', 'b']) {
      leases.taken(slug, `t-${slug}`, TTL, clock.now, at(1));
      leases.committed(slug, `t-${slug}`, clock.now, at(2), true);
    }
    leases.taken('c', 't-c', TTL, clock.now, at(1));
    await leases.releaseAll();
    expect(released.sort()).toEqual(['a/t-a', 'b/t-b']);
    expect(leases.size).toBe(1);
  });
});
