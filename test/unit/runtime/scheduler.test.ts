/**
 * The deadline scheduler contains failures: one room whose tick keeps failing is reported once and
 * retried with a growing backoff while other rooms keep sealing; a store that cannot list due rooms
 * is reported, never a rejected promise.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/runtime/clock.js';
import { DeadlineScheduler } from '../../../src/runtime/scheduler.js';
import type { RoomStore } from '../../../src/store/port.js';

function dueStore(due: () => string[] | Promise<string[]>): RoomStore {
  return { dueRooms: async () => due(), nextDeadline: async () => null } as unknown as RoomStore;
}

describe('DeadlineScheduler', () => {
  it('reports a failing room once, backs off, and keeps ticking the others', async () => {
    const clock = new ManualClock();
    const ticks: string[] = [];
    const errors: (string | null)[] = [];
    let healthy = false;
    const scheduler = new DeadlineScheduler(
      dueStore(() => ['broken', 'fine']),
      clock,
      async (slug) => {
        ticks.push(slug);
        if (slug === 'broken' && !healthy) throw new Error('cannot seal');
      },
      (_error, slug) => errors.push(slug),
    );
    await scheduler.runDue();
    await scheduler.runDue();
    expect(ticks).toEqual(['broken', 'fine', 'fine']);
    expect(errors).toEqual(['broken']);
    expect(scheduler.failingRooms).toBe(1);

    clock.advance(1_000); // first backoff over: retried, fails again, not reported again
    await scheduler.runDue();
    clock.advance(1_000); // second backoff is 2 s: still waiting
    await scheduler.runDue();
    expect(ticks.filter((slug) => slug === 'broken')).toHaveLength(2);
    expect(errors).toEqual(['broken']);

    healthy = true;
    clock.advance(1_000);
    await scheduler.runDue();
    expect(ticks.filter((slug) => slug === 'broken')).toHaveLength(3);
    expect(scheduler.failingRooms).toBe(0);
  });

  it('reports a store that cannot list due rooms instead of rejecting', async () => {
    const errors: unknown[] = [];
    const scheduler = new DeadlineScheduler(
      dueStore(() => {
        throw new Error('store unavailable');
      }),
      new ManualClock(),
      async () => {},
      (error) => errors.push(error),
    );
    await expect(scheduler.runDue()).resolves.toBeUndefined();
    await scheduler.runDue();
    expect(errors).toHaveLength(1); // once per outage, not once per attempt
  });
});
