/** The bound on concurrent password hashing: a few run, a few wait, the rest are refused at once. */
import { describe, expect, it } from 'vitest';
import { PASSWORD_CHECK_BOUNDS, PasswordCheckQueue } from '../../../src/auth/password-checks.js';

/** A hash that ends when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, hash: () => opened.then(() => 'hashed') };
}

describe('password checks', () => {
  it('32 at once: two run, two wait, 28 get 429 without hashing; at most two ever run together', async () => {
    const queue = new PasswordCheckQueue({ running: 2, waiting: 2 });
    const gates = Array.from({ length: 32 }, gate);
    let peak = 0;
    let started = 0;
    const outcomes = gates.map((g) =>
      queue
        .run(() => {
          started++;
          peak = Math.max(peak, queue.running);
          return g.hash();
        })
        .then(
          (value) => value,
          (error: { code?: string; status?: number; headers?: Record<string, string> }) => error,
        ),
    );
    await Promise.resolve();
    expect(started).toBe(2);
    for (const g of gates) g.open();
    const settled = await Promise.all(outcomes);
    expect(settled.filter((o) => o === 'hashed')).toHaveLength(4);
    const refused = settled.filter((o) => o !== 'hashed') as {
      code: string;
      status: number;
      headers: Record<string, string>;
    }[];
    expect(refused).toHaveLength(28);
    for (const error of refused) {
      expect(error.code).toBe('rate_limit.exceeded');
      expect(error.status).toBe(429);
      expect(error.headers['retry-after']).toBe('1');
    }
    expect(started).toBe(4);
    expect(peak).toBe(2);
    expect(queue.running).toBe(0);
  });

  it('an admitted check waits at most one round: the line is never longer than the running slots', () => {
    expect(PASSWORD_CHECK_BOUNDS.waiting).toBeLessThanOrEqual(PASSWORD_CHECK_BOUNDS.running);
    // Two of libuv's four pool threads stay free for file, DNS and other crypto work.
    expect(PASSWORD_CHECK_BOUNDS.running).toBeLessThanOrEqual(2);
  });

  it('hands the slot on in arrival order, and gives it back when a hash fails', async () => {
    const queue = new PasswordCheckQueue({ running: 1, waiting: 2 });
    const order: number[] = [];
    const first = gate();
    const runs = [
      queue.run(async () => {
        await first.hash();
        order.push(1);
        throw new Error('scrypt failed');
      }),
      queue.run(async () => order.push(2)),
      queue.run(async () => order.push(3)),
    ];
    first.open();
    await Promise.allSettled(runs);
    expect(order).toEqual([1, 2, 3]);
    expect(queue.running).toBe(0);
    expect(await queue.run(async () => 'again')).toBe('again');
  });
});
