/**
 * How many room-password hashes (scrypt: 32 MiB and a thread-pool thread for ~100 ms each) run at
 * once (docs/architecture.md, Guess throttling). libuv's pool has four threads for every process's
 * file, DNS and crypto work; unbounded, 32 concurrent guessers held all of them and a rightful join
 * took ten times as long. Here at most `running` hashes run and `waiting` more wait their turn in
 * arrival order; a check past that is refused at once with 429 and Retry-After, costing nothing.
 * With waiting ≤ running, an admitted check waits at most one round: it finishes within twice the
 * time it takes alone, however many guess at once.
 */
import { type ProtocolError, protocolError } from '../errors.js';

export interface PasswordCheckBounds {
  /** Hashes computed at once. */
  running: number;
  /** Hashes admitted to wait for a free slot. */
  waiting: number;
}

/** Two of libuv's four threads at most, and as many waiting: the rest stay for everyone else. */
export const PASSWORD_CHECK_BOUNDS: PasswordCheckBounds = { running: 2, waiting: 2 };

const RETRY_AFTER_SECONDS = 1;

export class PasswordCheckQueue {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly bounds: PasswordCheckBounds = PASSWORD_CHECK_BOUNDS) {}

  /** Hashes running now (for tests and metrics). */
  get running(): number {
    return this.active;
  }

  /** Runs `hash` when a slot is free; throws 429 `rate_limit.exceeded` when every slot and place in line is taken. */
  async run<T>(hash: () => Promise<T>): Promise<T> {
    if (this.active >= this.bounds.running) {
      if (this.queue.length >= this.bounds.waiting) throw busy(this.bounds);
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await hash();
    } finally {
      // The slot passes straight to the next in line (active stays counted), or is given back.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}

function busy(bounds: PasswordCheckBounds): ProtocolError {
  return protocolError(
    'rate_limit.exceeded',
    `Too many room passwords are being checked right now (${bounds.running + bounds.waiting} at once at most). Retry after ${RETRY_AFTER_SECONDS} s.`,
    {
      hint: `Wait ${RETRY_AFTER_SECONDS} s (Retry-After) and send the password again; a member's token or an invite is never held here.`,
      details: {
        scope: 'guess',
        limit: bounds.running + bounds.waiting,
        window_seconds: RETRY_AFTER_SECONDS,
        retry_after_seconds: RETRY_AFTER_SECONDS,
      },
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    },
  );
}
