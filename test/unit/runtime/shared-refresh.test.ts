import { describe, expect, it } from 'vitest';
import { SharedRefresh } from '../../../src/runtime/shared-refresh.js';

/** A refresh that answers its run number once released. */
function controlled() {
  const runs: { release(): void; fail(): void }[] = [];
  const refresh = () =>
    new Promise<number>((resolve, reject) => {
      const n = runs.length + 1;
      runs.push({ release: () => resolve(n), fail: () => reject(new Error(`run ${n} failed`)) });
    });
  return { runs, refresh };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SharedRefresh', () => {
  it('gives callers arriving during a run the next run, started after it, shared by all of them', async () => {
    const shared = new SharedRefresh<number>();
    const { runs, refresh } = controlled();
    const first = shared.run('room', refresh);
    await tick();
    const later = [shared.run('room', refresh), shared.run('room', refresh), shared.run('room', refresh)];
    await tick();
    expect(runs).toHaveLength(1);
    runs[0]!.release();
    expect(await first).toBe(1);
    await tick();
    expect(runs).toHaveLength(2);
    runs[1]!.release();
    expect(await Promise.all(later)).toEqual([2, 2, 2]);
    // Idle again: the next caller starts a run at once.
    const again = shared.run('room', refresh);
    await tick();
    runs[2]!.release();
    expect(await again).toBe(3);
  });

  it('starts the next run after a failed one, and runs different keys side by side', async () => {
    const shared = new SharedRefresh<number>();
    const { runs, refresh } = controlled();
    const failing = shared.run('a', refresh);
    const other = shared.run('b', refresh);
    const next = shared.run('a', refresh);
    await tick();
    expect(runs).toHaveLength(2);
    runs[0]!.fail();
    await expect(failing).rejects.toThrow('run 1 failed');
    runs[1]!.release();
    expect(await other).toBe(2);
    await tick();
    runs[2]!.release();
    expect(await next).toBe(3);
  });
});
