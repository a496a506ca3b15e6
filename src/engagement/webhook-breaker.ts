/**
 * A circuit breaker per receiving origin (scheme, host and port of the webhook URL).
 *
 * A receiver that accepts connections and never answers holds every attempt sent to it for the whole
 * delivery timeout. After TRIP_AFTER_TIMEOUTS consecutive timeouts its origin is parked: nothing is
 * sent to it until the cool-down ends, and its deliveries are moved to that time in the outbox without
 * spending an attempt. Then one probe goes out (half-open): an answer closes the breaker, another
 * timeout parks the origin again for twice as long (up to MAX_COOL_DOWN_MS). Connection errors and
 * non-2xx answers are quick and hold nothing, so they leave the breaker alone: the retry schedule
 * already paces them (docs/architecture.md, Engagement).
 *
 * The state is per process and in memory: another process learns on its own, and a restart starts
 * closed, which at worst costs one more timeout per origin.
 */

export const TRIP_AFTER_TIMEOUTS = 2;
export const FIRST_COOL_DOWN_MS = 30_000;
export const MAX_COOL_DOWN_MS = 10 * 60_000;
/** Origins remembered at most; the oldest closed ones are forgotten first. */
const MAX_TRACKED = 10_000;

export type OriginGate =
  | { kind: 'closed' }
  /** One probe may be in flight. */
  | { kind: 'probe' }
  | { kind: 'parked'; until: number };

interface OriginState {
  timeouts: number;
  coolDownMs: number;
  /** While open: when the next probe may go. */
  openUntil: number | null;
}

export class OriginBreaker {
  private readonly origins = new Map<string, OriginState>();

  gate(origin: string, now: number): OriginGate {
    const state = this.origins.get(origin);
    if (!state || state.openUntil === null) return { kind: 'closed' };
    if (now < state.openUntil) return { kind: 'parked', until: state.openUntil };
    return { kind: 'probe' };
  }

  /** Origins parked right now (their next probe not yet due). */
  tripped(now: number): number {
    let count = 0;
    for (const state of this.origins.values()) if (state.openUntil !== null && now < state.openUntil) count++;
    return count;
  }

  /** An attempt to the origin got an answer or a quick failure: it is reachable and does not hang. */
  answered(origin: string): void {
    this.origins.delete(origin);
  }

  /** An attempt to the origin ran out its timeout. */
  timedOut(origin: string, now: number): void {
    const state = this.origins.get(origin) ?? { timeouts: 0, coolDownMs: 0, openUntil: null };
    // Attempts sent before the trip end while the origin is parked: they tell nothing new.
    if (state.openUntil !== null && now < state.openUntil) return;
    state.timeouts++;
    if (state.openUntil !== null) {
      // The probe timed out too: park again, for longer.
      state.coolDownMs = Math.min(state.coolDownMs * 2, MAX_COOL_DOWN_MS);
      state.openUntil = now + state.coolDownMs;
    } else if (state.timeouts >= TRIP_AFTER_TIMEOUTS) {
      state.coolDownMs = FIRST_COOL_DOWN_MS;
      state.openUntil = now + state.coolDownMs;
    }
    this.origins.delete(origin);
    this.origins.set(origin, state);
    if (this.origins.size > MAX_TRACKED) this.origins.delete(this.origins.keys().next().value!);
  }
}

/** The breaker's key of a webhook URL: its origin. */
export { originOf } from '../store/engagement-port.js';
