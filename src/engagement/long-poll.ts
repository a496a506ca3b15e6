/**
 * One long-poll call (docs/agents.md, The REST loop): answer at once when something is actionable (or when `wait` is 0),
 * otherwise park until a commit makes something actionable or the wait runs out.
 */
import type { RoomState } from '../domain/state.js';
import type { Clock } from '../runtime/clock.js';
import { roomNotFound } from '../runtime/registry.js';
import { shareAnswer } from '../runtime/shared-answer.js';
import type { EngagementStore } from '../store/engagement-port.js';
import type { WaitMode, WaitQuery, Wake } from './actionable.js';
import type { ParkingClaim } from './capacity.js';
import type { CredentialWatch } from './credential-watch.js';
import { claimOpenerSeal } from './opener-wakes.js';
import { timeoutBody, wakeBody } from './wait-response.js';
import type { StateSource, WaiterRegistry, WaitOutcome } from './waiters.js';

export const MAX_WAIT_SECONDS = 50;

export interface LongPollDeps {
  waiters: WaiterRegistry;
  states: StateSource;
  store: EngagementStore;
  clock: Clock;
}

export interface LongPollCall {
  slug: string;
  query: WaitQuery;
  /** Already clamped to [0, MAX_WAIT_SECONDS]. */
  waitSeconds: number;
  /** Whose share of the parking pool the wait takes. */
  claim: ParkingClaim;
  /** Aborted when the client goes away: the waiter is released at once. This call's own (WaiterRegistry.park). */
  signal?: AbortSignal | undefined;
  /** The credential the call was made with, re-checked on every commit while parked. */
  watch?: CredentialWatch | null | undefined;
  /**
   * The transport's writer of a wake's answer (REST: http/routes.ts): called inside the evaluation pass
   * that wakes the wait, with the answer the call then also returns, so the pass writes every answer
   * it wakes in one go, before any waiter's promise chain runs (docs/architecture.md, Engagement).
   */
  answer?: ((answer: Record<string, unknown>) => void) | undefined;
}

export async function longPoll(deps: LongPollDeps, call: LongPollCall): Promise<Record<string, unknown>> {
  const outcome =
    call.waitSeconds === 0
      ? await deps.waiters.evaluateNow(call.slug, call.query)
      : await parkUntilDeliverable(deps, call);
  if (outcome.kind === 'wake') return answerOf(outcome.state, call.query.mode, outcome.wake, deps.clock.now());
  if (outcome.kind === 'gone') throw roomNotFound(call.slug);
  // A superseded token or revoked mandate answers with its 401; a revoked invite (the token still
  // works) answers like a timeout, and the next call re-authenticates.
  if (outcome.kind === 'ended' && outcome.end.error) throw outcome.end.error;
  const state: RoomState | null = await deps.states.read(call.slug);
  if (!state) throw roomNotFound(call.slug);
  return timeoutBody(state, call.query.mode, deps.clock.now());
}

/**
 * The answer built for a wake: an evaluation pass hands every waiter of a wake key the same wake
 * (waiters.ts), and `wakeBody` is a pure function of the state the wake came with, the mode, the wake
 * and the instant, so the waiters one pass wakes share one answer, built at the instant the first of
 * them is answered, instead of ten thousand equal ones (or one per millisecond the pass takes to write
 * them). A wake lives only as long as the pass's waiters hold it; `wait=0` evaluates a fresh one.
 */
const answers = new WeakMap<Wake, { mode: WaitMode; body: Record<string, unknown> }>();

function answerOf(state: RoomState, mode: WaitMode, wake: Wake, now: number): Record<string, unknown> {
  const known = answers.get(wake);
  if (known && known.mode === mode) return known.body;
  const body = shareAnswer(wakeBody(state, mode, wake, now));
  answers.set(wake, { mode, body });
  return body;
}

/**
 * Parks; an opener-seal wake to a participant is consumed on delivery, and only the consumer that wins
 * it gets it. Any other wake is answered as it comes (`call.answer`), unless it comes while an
 * opener-seal claim is out: the claim's outcome decides which wake this call returns.
 */
async function parkUntilDeliverable(deps: LongPollDeps, call: LongPollCall): Promise<WaitOutcome> {
  const participantId = call.query.reader.participantId;
  const answer = call.answer;
  let claiming = false;
  const parked = deps.waiters.park(
    call.slug,
    call.query,
    call.waitSeconds * 1000,
    call.claim,
    call.signal,
    call.watch ?? null,
    answer &&
      ((wake, state) => {
        if (!claiming && (wake.kind !== 'opener_seal' || participantId === null))
          answer(answerOf(state, call.query.mode, wake, deps.clock.now()));
      }),
  );
  try {
    for (;;) {
      const outcome = await parked.next();
      if (outcome.kind !== 'wake' || outcome.wake.kind !== 'opener_seal' || participantId === null) return outcome;
      claiming = true;
      const claimed = await claimOpenerSeal(deps.store, call.slug, participantId, outcome.wake.decision.data.id);
      claiming = false;
      if (claimed) return outcome;
      parked.recheck();
    }
  } finally {
    parked.release();
  }
}
