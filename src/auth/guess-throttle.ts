/**
 * Guess throttling (docs/architecture.md, Guess throttling): wrong room passwords, unknown invites
 * and unknown bearer tokens (the admin token is the one an operator chooses) are counted, and a
 * client address that keeps guessing is refused with 429 `rate_limit.exceeded` and a Retry-After
 * before its next guess is even checked. Only failures count, so the rightful user's correct
 * password costs nothing against the limits.
 *
 * Three counts, each a sliding log of failures in the shared rate counters (Redis when the service
 * runs on Redis, so every process sees every guess); the numbers are those of the default
 * GUESS_LIMIT_PER_MIN = 5, and all of them scale with it:
 * - per (room, address): 5 per minute and 20 per hour. The second tier is the backoff: short
 *   bursts wait a minute, an address that keeps coming back waits up to an hour.
 * - per address, over every room: 30 per 10 minutes, so spraying many rooms is held too.
 * - per room: 20 per minute from every address together, a ceiling for an attacker with many
 *   addresses. It holds every guess on the room, first guesses from a fresh address included: an
 *   attacker with a hundred addresses gets 20 guesses a minute on a room, not a hundred. The price
 *   is that a room under attack takes no password, not even the right one, for the rest of that
 *   minute (Retry-After says how long); members keep their tokens and minted invites, which are not
 *   guesses, so the room goes on.
 *
 * An address is counted by its group (client-address.ts): an IPv6 client is its /64, however many
 * of its addresses it writes into requests.
 *
 * Counting happens after a guess fails, so concurrent guesses would all pass the check before any
 * is counted: a guess therefore counts the guesses in flight in this process that arrived before it
 * as failures. Across processes the check and the count are separate calls: N processes may each let
 * a limit's worth through at the same instant, never more. When the counters cannot answer, the
 * guess is refused (503), never let through unchecked.
 */
import { ProtocolError, protocolError } from '../errors.js';
import { StoreUnavailableError } from '../store/port.js';
import { addressGroup } from './client-address.js';
import type { MandateRateCounter, RateDecision } from './rate-limit.js';

interface Tier {
  limit: number;
  windowSec: number;
}

/** The default per-minute limit per (room, address) (GUESS_LIMIT_PER_MIN); the other limits scale with it. */
export const DEFAULT_GUESSES_PER_MINUTE = 5;

interface GuessLimits {
  roomAddress: Tier[];
  address: Tier[];
  room: Tier[];
}

/** With the default of 5: 5/min and 20/h per (room, address), 30 per 10 min per address, 20/min per room. */
export function guessLimits(perMinute: number): GuessLimits {
  return {
    roomAddress: [
      { limit: perMinute, windowSec: 60 },
      { limit: perMinute * 4, windowSec: 3600 },
    ],
    address: [{ limit: perMinute * 6, windowSec: 600 }],
    room: [{ limit: perMinute * 4, windowSec: 60 }],
  };
}

/** What a request presents that could be a guess. */
export interface GuessAttempt {
  /** The room the guess is about; null for room-less calls (a token on a discovery call). */
  slug: string | null;
  address: string;
}

/** Refusals that mean "this secret is wrong"; others (revoked invite, superseded token) are not guesses. */
export function isWrongGuess(error: unknown): boolean {
  if (!(error instanceof ProtocolError)) return false;
  if (error.code === 'auth.invalid_password' || error.code === 'auth.invalid_token') return true;
  return error.code === 'invite.invalid' && error.details?.reason === 'not_found';
}

export class GuessThrottle {
  /**
   * Guesses in flight in this process, per key, by ticket: a guess counts those that arrived before
   * it as failures, so a concurrent burst is held before any of it has failed, in arrival order.
   */
  private readonly inFlight = new Map<string, Set<number>>();
  private nextTicket = 0;
  private readonly limits: GuessLimits;

  constructor(
    private readonly counter: MandateRateCounter,
    private readonly now: () => number,
    perMinute = DEFAULT_GUESSES_PER_MINUTE,
  ) {
    this.limits = guessLimits(perMinute);
  }

  /**
   * Runs `attempt` unless the address is held; counts it as a failure when it throws a wrong-guess
   * refusal. Throws 429 `rate_limit.exceeded` when held.
   */
  async guard<T>(guess: GuessAttempt, attempt: () => Promise<T>): Promise<T> {
    const keys = keysOf(guess);
    const ticket = this.nextTicket++;
    for (const key of keys.all) {
      const tickets = this.inFlight.get(key) ?? new Set<number>();
      tickets.add(ticket);
      this.inFlight.set(key, tickets);
    }
    try {
      try {
        await this.check(guess, keys, ticket);
      } catch (error) {
        // Fails closed: while the counters cannot answer, a guess is not checked at all (503).
        if (error instanceof ProtocolError) throw error;
        throw new StoreUnavailableError('the guess counters are unavailable', { cause: error });
      }
      try {
        return await attempt();
      } catch (error) {
        // A count that cannot be written is lost; the next guess's check fails closed meanwhile.
        if (isWrongGuess(error)) await this.recordFailure(keys).catch(() => undefined);
        throw error;
      }
    } finally {
      for (const key of keys.all) {
        const tickets = this.inFlight.get(key);
        tickets?.delete(ticket);
        if (tickets?.size === 0) this.inFlight.delete(key);
      }
    }
  }

  /** Guesses on this key that arrived before `ticket` and have not ended. */
  private earlier(key: string, ticket: number): number {
    let count = 0;
    for (const other of this.inFlight.get(key) ?? []) if (other < ticket) count++;
    return count;
  }

  private async check(guess: GuessAttempt, keys: GuessKeys, ticket: number): Promise<void> {
    const at = this.now();
    const tiers: [string, Tier][] = this.limits.address.map((tier) => [keys.address, tier]);
    if (keys.roomAddress !== null && keys.room !== null) {
      const { roomAddress, room } = keys;
      tiers.push(...this.limits.roomAddress.map((tier): [string, Tier] => [roomAddress, tier]));
      // Every guess on the room, a first one included: many addresses share one ceiling.
      tiers.push(...this.limits.room.map((tier): [string, Tier] => [room, tier]));
    }
    const decisions = await Promise.all(tiers.map(([key, tier]) => this.decide(key, tier, ticket, at)));
    // The answer names the tier that holds the address longest.
    let longest = -1;
    decisions.forEach((decision, i) => {
      if (!decision.allowed && (longest < 0 || decision.retryAfterSeconds > decisions[longest]!.retryAfterSeconds)) {
        longest = i;
      }
    });
    if (longest >= 0) throw tooManyGuesses(guess, tiers[longest]![1], decisions[longest]!.retryAfterSeconds);
  }

  /** A tier's decision, with this process's earlier guesses in flight counted as failures. */
  private async decide(key: string, tier: Tier, ticket: number, at: number): Promise<RateDecision> {
    const pending = this.earlier(key, ticket);
    if (pending >= tier.limit) return { allowed: false, retryAfterSeconds: 1 };
    return this.counter.check(key, tier.limit - pending, tier.windowSec, at);
  }

  private async recordFailure(keys: GuessKeys): Promise<void> {
    const at = this.now();
    const writes = [this.counter.record(keys.address, at, maxWindow(this.limits.address))];
    if (keys.roomAddress !== null)
      writes.push(this.counter.record(keys.roomAddress, at, maxWindow(this.limits.roomAddress)));
    if (keys.room !== null) writes.push(this.counter.record(keys.room, at, maxWindow(this.limits.room)));
    await Promise.all(writes);
  }
}

interface GuessKeys {
  address: string;
  roomAddress: string | null;
  room: string | null;
  all: string[];
}

function keysOf({ slug, address: exact }: GuessAttempt): GuessKeys {
  const address = addressGroup(exact);
  const keys = {
    address: `guess:addr:${address}`,
    roomAddress: slug === null ? null : `guess:room-addr:${slug}:${address}`,
    room: slug === null ? null : `guess:room:${slug}`,
  };
  return { ...keys, all: [keys.address, keys.roomAddress, keys.room].filter((k): k is string => k !== null) };
}

function maxWindow(tiers: readonly Tier[]): number {
  return Math.max(...tiers.map((t) => t.windowSec));
}

function tooManyGuesses(guess: GuessAttempt, tier: Tier, retryAfterSeconds: number): ProtocolError {
  const where = guess.slug === null ? '' : ` for room ${guess.slug}`;
  return protocolError(
    'rate_limit.exceeded',
    `Too many wrong passwords, invites or tokens from this client address${where}. Retry after ${retryAfterSeconds} s with the right credential; guessing again extends the wait.`,
    {
      hint: `Wait ${retryAfterSeconds} s (Retry-After); ask the room operator for an invite or the password.`,
      details: {
        scope: 'guess',
        limit: tier.limit,
        window_seconds: tier.windowSec,
        retry_after_seconds: retryAfterSeconds,
      },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}

/**
 * Minted credentials (`t_…`, `it_…`, `rk_…`, 256 random bits) cannot be guessed, so a request that
 * presents only those is not held up by a throttle check; anything else could be a guess.
 */
const MINTED_TOKEN = /^(t|it|rk|dc)_[A-Za-z0-9_-]{43}$/;

/**
 * The guess a request carries: a room password (X-Room-Password, MCP `password`, or a join's
 * `password`), a join's invite, or a bearer token not of the minted shape (the admin token); null
 * when it carries none, which keeps the throttle off the hot path of ordinary calls.
 */
export function guessIn(
  ctx: { clientIp: string; credentials: { bearer?: string | undefined; password?: string | undefined } },
  input: unknown,
): GuessAttempt | null {
  const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const slug = typeof fields.slug === 'string' ? fields.slug : null;
  const { bearer, password } = ctx.credentials;
  // A password or invite in the body of a call on an existing room (a join); creating a room with a
  // password is not a guess.
  const guessing =
    password !== undefined ||
    (slug !== null && typeof fields.password === 'string') ||
    (slug !== null && typeof fields.invite === 'string' && !MINTED_TOKEN.test(fields.invite)) ||
    (bearer !== undefined && !MINTED_TOKEN.test(bearer));
  if (!guessing) return null;
  return { slug, address: ctx.clientIp };
}
