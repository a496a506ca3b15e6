/**
 * How many room-password hashes (scrypt: 32 MiB and a thread-pool thread for ~100 ms each) run at
 * once, and who goes first (docs/architecture.md, Guess throttling). libuv's pool has four threads
 * for every process's file, DNS and crypto work; unbounded, 32 concurrent guessers held all of them
 * and a rightful join took ten times as long.
 *
 * At most `running` hashes run (and `quiet` more, below) and `waiting` more wait; a check past that is refused at once with
 * 429 and Retry-After, costing nothing. The line is not first come, first served: each requester
 * (an address group, client-address.ts) carries a score of the hashes it had, and of the refusals it
 * got, recently (decaying by half every minute), and a free slot goes to the waiter with the lowest
 * score. A guesser's every check and every 429 raises its own score, so its next check queues behind
 * anyone who has not been asking; a full
 * line lets a newcomer with a lower score in by refusing the waiter with the highest. One requester
 * holds at most `perRequester` places, running or waiting, so one client cannot fill the line.
 *
 * A quiet requester (less than about one check lately) also has a slot of its own beside the open
 * one, so a rightful client that guessers find hashing does not wait for them at all.
 *
 * The bound that follows: a requester that has not been hashing starts at once in the quiet slot,
 * or goes to the head of the line and waits for one running hash at most (when another quiet
 * requester holds that slot), so its check finishes within twice the time it takes alone
 * however many clients guess at once, as long as each keeps its address (a botnet of fresh addresses
 * is held by the guess tiers, guess-throttle.ts). (A right password is remembered by the
 * process that checked it, so a rightful client seldom hashes at all.)
 */
import { type ProtocolError, protocolError } from '../errors.js';

export interface PasswordCheckBounds {
  /** Hashes computed at once, for anyone. */
  running: number;
  /** Hashes computed at once beside those, only for a quiet requester (fewer than one check lately). */
  quiet: number;
  /** Hashes admitted to wait for a free slot. */
  waiting: number;
  /** Places (running or waiting) one requester may hold at once. */
  perRequester: number;
}

/**
 * Two of libuv's four threads at most (one for anyone, one kept for quiet requesters), four waiting,
 * two places a requester: the rest stay for everyone else.
 */
export const PASSWORD_CHECK_BOUNDS: PasswordCheckBounds = { running: 1, quiet: 1, waiting: 4, perRequester: 2 };

const RETRY_AFTER_SECONDS = 1;
/** A requester's score halves every minute: a client that stopped guessing is soon first again. */
const HALF_LIFE_MS = 60_000;
/** Scores remembered at most; the stalest is dropped first (it has decayed the most). */
const SCORES_MAX = 10_000;
/** Below this score a requester is quiet: less than about one check (or refusal) in the last minute. */
const QUIET_SCORE = 1;

/** The slot a hash runs in: one for anyone, or one kept for quiet requesters. */
type Slot = 'open' | 'quiet';

interface Waiter {
  requester: string;
  score: number;
  arrival: number;
  admit(slot: Slot): void;
  refuse(error: ProtocolError): void;
}

interface Score {
  value: number;
  at: number;
}

export class PasswordCheckQueue {
  private active = 0;
  private activeQuiet = 0;
  private arrivals = 0;
  private readonly line: Waiter[] = [];
  private readonly held = new Map<string, number>();
  private readonly scores = new Map<string, Score>();

  constructor(
    private readonly bounds: PasswordCheckBounds = PASSWORD_CHECK_BOUNDS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Hashes running now (for tests and metrics). */
  get running(): number {
    return this.active + this.activeQuiet;
  }

  /** Checks waiting for a slot now (for tests and metrics). */
  get waiting(): number {
    return this.line.length;
  }

  /**
   * Runs `hash` for `requester` (an address group; '' when unknown) when a slot is given to it;
   * throws 429 `rate_limit.exceeded` when the requester holds its share already, or when the line is
   * full of requesters no busier than this one.
   */
  async run<T>(hash: () => Promise<T>, requester = ''): Promise<T> {
    if ((this.held.get(requester) ?? 0) >= this.bounds.perRequester) throw this.refusal(requester);
    const score = this.scoreOf(requester);
    let slot: Slot;
    if (this.active < this.bounds.running) {
      this.active++;
      slot = 'open';
      this.charge(requester);
    } else if (isQuiet(score) && this.activeQuiet < this.bounds.quiet) {
      this.activeQuiet++;
      slot = 'quiet';
      this.charge(requester);
    } else {
      slot = await this.wait(requester, score);
    }
    this.held.set(requester, (this.held.get(requester) ?? 0) + 1);
    try {
      return await hash();
    } finally {
      this.release(requester);
      this.passSlot(slot);
    }
  }

  private wait(requester: string, score: number): Promise<Slot> {
    if (this.line.length >= this.bounds.waiting) {
      const busiest = this.busiestWaiter();
      // A newcomer no less busy than everyone in line is the one refused.
      if (busiest === undefined || busiest.score <= score) throw this.refusal(requester);
      this.line.splice(this.line.indexOf(busiest), 1);
      this.release(busiest.requester);
      busiest.refuse(this.refusal(busiest.requester));
    }
    // Counted as held while waiting, so one requester cannot fill the line.
    this.held.set(requester, (this.held.get(requester) ?? 0) + 1);
    return new Promise<Slot>((admit, refuse) => {
      this.line.push({ requester, score, arrival: this.arrivals++, admit, refuse });
    }).then((slot) => {
      this.release(requester);
      return slot;
    });
  }

  /**
   * The slot passes straight to the least busy waiter that may take it (the count stays), or is
   * given back: the open slot to anyone, the quiet slot only to a quiet waiter.
   */
  private passSlot(slot: Slot): void {
    let next: Waiter | undefined;
    for (const waiter of this.line) {
      if (slot === 'quiet' && !isQuiet(waiter.score)) continue;
      if (!next || goesBefore(waiter, next)) next = waiter;
    }
    if (!next) {
      if (slot === 'open') this.active--;
      else this.activeQuiet--;
      return;
    }
    this.line.splice(this.line.indexOf(next), 1);
    this.charge(next.requester);
    next.admit(slot);
  }

  private busiestWaiter(): Waiter | undefined {
    let busiest: Waiter | undefined;
    for (const waiter of this.line) if (!busiest || goesBefore(busiest, waiter)) busiest = waiter;
    return busiest;
  }

  private release(requester: string): void {
    const left = (this.held.get(requester) ?? 1) - 1;
    if (left === 0) this.held.delete(requester);
    else this.held.set(requester, left);
  }

  /** The requester's recent hashes, decayed to now. */
  private scoreOf(requester: string): number {
    const score = this.scores.get(requester);
    if (!score) return 0;
    return score.value * 0.5 ** (Math.max(0, this.now() - score.at) / HALF_LIFE_MS);
  }

  /**
   * A 429 for the requester, which counts on its score like a hash: a client refused again and
   * again is asking for hashes too, and waits behind one that asks for its first.
   */
  private refusal(requester: string): ProtocolError {
    this.charge(requester);
    return busy(this.bounds);
  }

  /** One more hash (or refusal) for the requester: its score rises by one, and it becomes the freshest entry. */
  private charge(requester: string): void {
    const value = this.scoreOf(requester) + 1;
    this.scores.delete(requester);
    this.scores.set(requester, { value, at: this.now() });
    if (this.scores.size > SCORES_MAX) this.scores.delete(this.scores.keys().next().value!);
  }
}

/** The line's one order: the lower score first, then the earlier arrival. */
function goesBefore(a: Waiter, b: Waiter): boolean {
  return a.score < b.score || (a.score === b.score && a.arrival < b.arrival);
}

function isQuiet(score: number): boolean {
  return score < QUIET_SCORE;
}

function busy(bounds: PasswordCheckBounds): ProtocolError {
  return protocolError(
    'rate_limit.exceeded',
    `Too many room passwords are being checked right now (${bounds.running + bounds.waiting} at once at most, ${bounds.perRequester} for one client address). Retry after ${RETRY_AFTER_SECONDS} s.`,
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
