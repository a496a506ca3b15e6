/**
 * The bound on concurrent password hashing: a few run, a few wait, the rest are refused at once —
 * and a client that has not been hashing goes ahead of those that have (docs/architecture.md, Guess
 * throttling).
 */
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

type Refusal = { code: string; status: number; headers: Record<string, string> };

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function outcome<T>(run: Promise<T>): Promise<T | Refusal> {
  return run.then(
    (value) => value,
    (error: Refusal) => error,
  );
}

describe('password checks', () => {
  it('32 requesters at once: two run, four wait, 26 get 429 without hashing; at most two ever run together', async () => {
    const queue = new PasswordCheckQueue({ running: 2, quiet: 0, waiting: 4, perRequester: 2 });
    const gates = Array.from({ length: 32 }, gate);
    let peak = 0;
    let started = 0;
    const outcomes = gates.map((g, i) =>
      outcome(
        queue.run(() => {
          started++;
          peak = Math.max(peak, queue.running);
          return g.hash();
        }, `guesser-${i}`),
      ),
    );
    await settle();
    expect(started).toBe(2);
    expect(queue.waiting).toBe(4);
    for (const g of gates) g.open();
    const settled = await Promise.all(outcomes);
    expect(settled.filter((o) => o === 'hashed')).toHaveLength(6);
    const refused = settled.filter((o) => o !== 'hashed') as Refusal[];
    expect(refused).toHaveLength(26);
    for (const error of refused) {
      expect(error.code).toBe('rate_limit.exceeded');
      expect(error.status).toBe(429);
      expect(error.headers['retry-after']).toBe('1');
    }
    expect(started).toBe(6);
    expect(peak).toBe(2);
    expect(queue.running).toBe(0);
  });

  it('one requester holds two places at most, running or waiting', async () => {
    const queue = new PasswordCheckQueue({ running: 1, quiet: 0, waiting: 4, perRequester: 2 });
    const held = gate();
    const runs = [0, 1, 2].map(() => outcome(queue.run(held.hash, 'one-client')));
    await settle();
    const third = await runs[2];
    expect((third as Refusal).code).toBe('rate_limit.exceeded');
    // Another client still finds a place in line.
    const other = outcome(queue.run(async () => 'other', 'other-client'));
    await settle();
    expect(queue.waiting).toBe(2);
    held.open();
    expect(await Promise.all([runs[0], runs[1], other])).toEqual(['hashed', 'hashed', 'other']);
  });

  it('a client that has not been hashing goes first and waits one running hash at most, however many guess', async () => {
    let now = 0;
    const queue = new PasswordCheckQueue({ running: 2, quiet: 0, waiting: 4, perRequester: 2 }, () => now);
    // 32 guessers keep the queue full: whoever finishes comes straight back with its next guess.
    const order: string[] = [];
    let stop = false;
    const running = new Map<string, () => void>();
    /** Guessers refused with 429, who come back after the next hash ends (their Retry-After). */
    let refused: (() => void)[] = [];
    const guess = async (who: string): Promise<void> => {
      while (!stop) {
        const answer = await outcome(
          queue.run(
            () =>
              new Promise<string>((resolve) => {
                order.push(who);
                running.set(who, () => resolve('wrong'));
              }),
            who,
          ),
        );
        if (answer !== 'wrong') await new Promise<void>((retry) => refused.push(retry));
      }
    };
    const guessers = Array.from({ length: 32 }, (_, i) => guess(`guesser-${i}`));
    /** Ends the oldest running hash, as scrypt would ~100 ms later; the refused try again. */
    const finishOne = async () => {
      now += 100;
      const first = running.entries().next().value;
      if (first) {
        running.delete(first[0]);
        first[1]();
      }
      const retrying = refused;
      refused = [];
      for (const retry of retrying) retry();
      await settle();
    };
    for (let round = 0; round < 40; round++) await finishOne();
    expect(queue.running).toBe(2);
    expect(queue.waiting).toBe(4);

    // The rightful client arrives while the line is full of guessers.
    const rightful = outcome(
      queue.run(async () => {
        order.push('rightful-client');
        return 'right';
      }, 'rightful-client'),
    );
    await settle();
    expect(order).not.toContain('rightful-client');
    const before = order.length;
    await finishOne();
    // The first slot that frees is its: one running hash waited, not a line of them.
    expect(order[before]).toBe('rightful-client');
    expect(await rightful).toBe('right');

    stop = true;
    while (running.size > 0 || queue.waiting > 0) await finishOne();
    await Promise.all(guessers);
    expect(queue.running).toBe(0);
  });

  it('a requester that stopped hashing is soon first again: its score halves every minute', async () => {
    let now = 0;
    const queue = new PasswordCheckQueue({ running: 1, quiet: 0, waiting: 2, perRequester: 2 }, () => now);
    for (let i = 0; i < 8; i++) await queue.run(async () => 'x', 'once-busy');
    const held = gate();
    const first = queue.run(held.hash, 'holder');
    const order: string[] = [];
    // Just after its eight checks, the once-busy client queues behind a newer, quieter one.
    const busy = queue.run(async () => order.push('once-busy'), 'once-busy');
    const quiet = queue.run(async () => order.push('quiet'), 'quiet');
    held.open();
    await Promise.all([first, busy, quiet]);
    expect(order).toEqual(['quiet', 'once-busy']);

    // Ten minutes later its score has decayed below a single recent check's: it goes first again.
    now += 10 * 60_000;
    await queue.run(async () => 'x', 'checked-once');
    order.length = 0;
    const heldAgain = gate();
    const again = queue.run(heldAgain.hash, 'holder-2');
    const recent = queue.run(async () => order.push('checked-once'), 'checked-once');
    const rested = queue.run(async () => order.push('once-busy'), 'once-busy');
    heldAgain.open();
    await Promise.all([again, recent, rested]);
    expect(order[0]).toBe('once-busy');
  });

  it('a full line refuses its busiest waiter to let a quieter newcomer in; a newcomer no quieter is refused', async () => {
    const queue = new PasswordCheckQueue({ running: 1, quiet: 0, waiting: 2, perRequester: 2 });
    for (let i = 0; i < 3; i++) await queue.run(async () => 'x', 'busy');
    const held = gate();
    const first = queue.run(held.hash, 'holder');
    const busyWaiter = outcome(queue.run(async () => 'busy ran', 'busy'));
    const quietWaiter = outcome(queue.run(async () => 'quiet ran', 'quiet'));
    // The line is full; a fresh client displaces the busy one, a second fresh one is refused.
    const fresh = outcome(queue.run(async () => 'fresh ran', 'fresh'));
    const alsoFresh = outcome(queue.run(async () => 'also fresh ran', 'also-fresh'));
    expect(((await busyWaiter) as Refusal).code).toBe('rate_limit.exceeded');
    expect(((await alsoFresh) as Refusal).code).toBe('rate_limit.exceeded');
    held.open();
    await first;
    expect(await Promise.all([quietWaiter, fresh])).toEqual(['quiet ran', 'fresh ran']);
    expect(queue.running).toBe(0);
    expect(queue.waiting).toBe(0);
  });

  it('keeps a slot for quiet requesters: a rightful client starts at once while guessers hold the open slot and the line', async () => {
    let now = 0;
    const queue = new PasswordCheckQueue({ running: 1, quiet: 1, waiting: 2, perRequester: 2 }, () => now);
    // Guessers that have been checking for a while are not quiet.
    for (let i = 0; i < 3; i++) {
      await queue.run(async () => 'x', 'guesser-a');
      await queue.run(async () => 'x', 'guesser-b');
    }
    const open = gate();
    const holding = queue.run(open.hash, 'guesser-a');
    // The quiet slot is not for them: they wait in line.
    const waiting = [
      outcome(queue.run(async () => 'a again', 'guesser-a')),
      outcome(queue.run(async () => 'b', 'guesser-b')),
    ];
    now += 10;
    await settle();
    expect(queue.running).toBe(1);
    expect(queue.waiting).toBe(2);
    const started: string[] = [];
    const rightful = queue.run(async () => {
      started.push('rightful');
      return 'right';
    }, 'rightful-client');
    await settle();
    expect(started).toEqual(['rightful']);
    expect(await rightful).toBe('right');
    open.open();
    await Promise.all([holding, ...waiting]);
    expect(queue.running).toBe(0);
  });

  it('remembers 10,000 requesters at most: many addresses cannot grow its memory without bound', async () => {
    const queue = new PasswordCheckQueue({ running: 1, quiet: 1, waiting: 0, perRequester: 2 }, () => 0);
    for (let i = 0; i < 3; i++) await queue.run(async () => 'x', 'first');
    const busyNow = async () => {
      const open = gate();
      const holding = queue.run(open.hash, 'holder');
      const answer = await outcome(queue.run(async () => 'ran', 'first'));
      open.open();
      await holding;
      return answer;
    };
    // Remembered as busy: not quiet, and no place in line (waiting 0).
    expect(((await busyNow()) as Refusal).code).toBe('rate_limit.exceeded');
    for (let i = 0; i < 10_000; i++) await queue.run(async () => 'x', `other-${i}`);
    // Its score was the stalest and has been dropped: quiet again, it takes the quiet slot.
    expect(await busyNow()).toBe('ran');
  });

  it('the shipped bounds keep two of libuv four pool threads free and a short line', () => {
    expect(PASSWORD_CHECK_BOUNDS.running + PASSWORD_CHECK_BOUNDS.quiet).toBeLessThanOrEqual(2);
    expect(PASSWORD_CHECK_BOUNDS.perRequester).toBeLessThanOrEqual(
      PASSWORD_CHECK_BOUNDS.running + PASSWORD_CHECK_BOUNDS.quiet,
    );
    expect(PASSWORD_CHECK_BOUNDS.waiting).toBeLessThanOrEqual(8);
  });

  it('hands the slot on in arrival order among equals, and gives it back when a hash fails', async () => {
    const queue = new PasswordCheckQueue({ running: 1, quiet: 0, waiting: 2, perRequester: 2 });
    const order: number[] = [];
    const first = gate();
    const runs = [
      queue.run(async () => {
        await first.hash();
        order.push(1);
        throw new Error('scrypt failed');
      }, 'a'),
      queue.run(async () => order.push(2), 'b'),
      queue.run(async () => order.push(3), 'c'),
    ];
    first.open();
    await Promise.allSettled(runs);
    expect(order).toEqual([1, 2, 3]);
    expect(queue.running).toBe(0);
    expect(await queue.run(async () => 'again', 'a')).toBe('again');
  });
});
