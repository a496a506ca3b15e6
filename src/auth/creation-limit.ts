/**
 * The room-creation limit: rooms one client address may create per hour (RATE_LIMIT_CREATE_PER_HOUR),
 * stricter than the per-IP request limit because every room is kept (docs/architecture.md, Memory
 * and disk). It counts creations over REST and MCP alike, whatever credential comes with them: a
 * self-issued mandate costs nothing to mint, so exempting credentials would exempt everyone.
 * The counts live on the request-rate counters (in Redis when the store is Redis, so the limit holds
 * across processes); only creations that passed validation are counted. A retry with the same
 * Idempotency-Key counts again (the replay is found later, by the registry), so a client at its limit
 * that lost the answer waits for the window like any other creation.
 */
import { type ProtocolError, protocolError } from '../errors.js';
import { StoreUnavailableError } from '../store/port.js';
import { addressGroup } from './client-address.js';
import type { RateDecision, RateLimitSettings, RequestRateCounter } from './rate-limit.js';

export const CREATE_WINDOW_MS = 3_600_000;

/** Throws 429 `rate_limit.exceeded` when the address has used its creations for the hour. */
export async function limitRoomCreation(
  rates: { counter: RequestRateCounter; settings: RateLimitSettings } | null,
  clientIp: string,
  now: number,
): Promise<void> {
  const limit = rates?.settings.createPerHour ?? 0;
  if (!rates || limit <= 0) return;
  let decision: RateDecision;
  try {
    // Counted on the address group: an IPv6 client's /64 (client-address.ts), not each address in it.
    decision = await rates.counter.take(`create:ip:${addressGroup(clientIp)}`, limit, CREATE_WINDOW_MS, now);
  } catch (error) {
    // A limit that cannot be counted is not waived: the creation waits for the counters (503).
    throw new StoreUnavailableError('the room-creation limiter could not be reached', { cause: error });
  }
  if (!decision.allowed) throw creationLimitError(limit, decision.retryAfterSeconds);
}

function creationLimitError(limit: number, retryAfterSeconds: number): ProtocolError {
  return protocolError(
    'rate_limit.exceeded',
    `Too many rooms: this client address may create ${limit} rooms per hour. Retry after ${retryAfterSeconds} s, or reuse a room you created (ask opens another decision in it).`,
    {
      hint: `Wait ${retryAfterSeconds} s (Retry-After) before creating another room.`,
      details: {
        scope: 'ip',
        limit,
        window_seconds: CREATE_WINDOW_MS / 1000,
        retry_after_seconds: retryAfterSeconds,
      },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}
