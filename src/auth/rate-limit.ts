/**
 * Sliding-window counters for the service's rate limits (per client IP and per credential; docs/operators.md, Configuration)
 * and for mandate rate caps (successful mutating calls per (iss, sub, room); docs/concepts.md, Mandates). Both keep a
 * log of timestamps per key, so Retry-After is exact: the time until enough counted calls have left
 * the window. In-memory here; rate-limit-redis.ts holds the same counters across processes.
 */
import { createHash } from 'node:crypto';
import { type ProtocolError, protocolError } from '../errors.js';

/** The request limits (docs/operators.md, Configuration). */
export interface RateLimitSettings {
  /** Requests per minute per client IP; 0 disables. */
  ipPerMinute: number;
  /** Mutating requests per minute per credential; 0 disables. */
  credentialPerMinute: number;
  /** Rooms created per hour per client IP (creation-limit.ts); 0 disables. */
  createPerHour: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds (≥ 1) until a call would be allowed; 0 when allowed. */
  retryAfterSeconds: number;
}

/** One budget a call is counted on. */
export interface Budget {
  key: string;
  limit: number;
}

/** Which of a call's budgets refused it (its index in the list), and the wait it answered. */
export interface Refusal {
  index: number;
  decision: RateDecision;
}

/** The request limiters: a request counts only when it is allowed (a refused request does not extend the wait). */
export interface RequestRateCounter {
  /** Counts in this process's memory: it answers at once and can never hang (no deadline to race). */
  readonly inProcess?: boolean;
  take(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision>;
  /**
   * Counts one call on all of `budgets` or on none: every budget is checked first, and the call is
   * counted only when all of them allow it, so a refused call counts on no budget. Null when counted,
   * else the first budget (in order) that refused. On Redis this is one round trip for the whole call.
   */
  takeAll(budgets: readonly Budget[], windowMs: number, now: number): Promise<Refusal | null>;
}

/**
 * Mandate rate caps (docs/concepts.md, Mandates). `check` before the act, `record` after it succeeded: only successful calls
 * count. Mandates with different windows may share a key, so `record` keeps each entry for
 * `windowSec` at least and `check` counts only the entries of its own window.
 */
export interface MandateRateCounter {
  check(key: string, limit: number, windowSec: number, now: number): Promise<RateDecision>;
  record(key: string, now: number, windowSec: number): Promise<void>;
}

/** A mandate log never holds more entries than this (limits above it never trip). */
export const MAX_MANDATE_LOG_ENTRIES = 10_000;

export const ALLOWED: RateDecision = { allowed: true, retryAfterSeconds: 0 };

/**
 * Seconds until the count of entries newer than `now - windowMs` drops below `limit`, given the
 * window's entries in ascending order (at least `limit` of them).
 */
export function retryAfter(entriesInWindow: readonly number[], limit: number, windowMs: number, now: number): number {
  const leaving = entriesInWindow[entriesInWindow.length - limit]!;
  return Math.max(1, Math.ceil((leaving + windowMs - now) / 1000));
}

interface Log {
  times: number[];
  /** The log may be dropped once its newest entry is older than this many ms. */
  retainMs: number;
}

const SWEEP_EVERY = 1000;

export class MemoryRateCounters implements RequestRateCounter, MandateRateCounter {
  readonly inProcess = true;
  private readonly logs = new Map<string, Log>();
  private operations = 0;

  async take(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    return (await this.takeAll([{ key, limit }], windowMs, now))?.decision ?? ALLOWED;
  }

  async takeAll(budgets: readonly Budget[], windowMs: number, now: number): Promise<Refusal | null> {
    this.tick(now);
    const logs = budgets.map(({ key }) => this.log(key, windowMs));
    for (const [index, log] of logs.entries()) {
      const inWindow = log.times.filter((t) => t > now - windowMs);
      log.times = inWindow;
      const { limit } = budgets[index]!;
      if (inWindow.length >= limit) {
        return { index, decision: { allowed: false, retryAfterSeconds: retryAfter(inWindow, limit, windowMs, now) } };
      }
    }
    for (const log of logs) insertSorted(log.times, now);
    return null;
  }

  async check(key: string, limit: number, windowSec: number, now: number): Promise<RateDecision> {
    const windowMs = windowSec * 1000;
    const inWindow = (this.logs.get(key)?.times ?? []).filter((t) => t > now - windowMs);
    if (inWindow.length < limit) return ALLOWED;
    return { allowed: false, retryAfterSeconds: retryAfter(inWindow, limit, windowMs, now) };
  }

  async record(key: string, now: number, windowSec: number): Promise<void> {
    this.tick(now);
    const log = this.log(key, windowSec * 1000);
    insertSorted(log.times, now);
    if (log.times.length > MAX_MANDATE_LOG_ENTRIES) log.times.splice(0, log.times.length - MAX_MANDATE_LOG_ENTRIES);
  }

  /** Counts an operation; every SWEEP_EVERY-th drops the logs nothing in any window holds. */
  private tick(now: number): void {
    if (++this.operations % SWEEP_EVERY === 0) this.sweep(now);
  }

  private log(key: string, retainMs: number): Log {
    let log = this.logs.get(key);
    if (!log) {
      log = { times: [], retainMs };
      this.logs.set(key, log);
    }
    log.retainMs = Math.max(log.retainMs, retainMs);
    return log;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.logs) {
      const newest = log.times.at(-1);
      if (newest === undefined || newest <= now - log.retainMs) this.logs.delete(key);
    }
  }
}

function insertSorted(times: number[], value: number): void {
  let index = times.length;
  while (index > 0 && times[index - 1]! > value) index--;
  times.splice(index, 0, value);
}

/**
 * The per-credential key: SHA-256 of the bearer, or of the whole mandate when one is presented (the
 * mandate path wins, docs/concepts.md, Credentials). The whole token, not its jti or signature: a
 * copy whose payload was edited (the signature kept) or that names a known jti is another key, so
 * it finds neither the original's entry among known credentials nor its per-credential budget.
 */
export function credentialRateKey(presented: {
  bearer?: string | undefined;
  mandate?: string | undefined;
}): string | null {
  if (presented.mandate) return `cred:mandate:${sha256(presented.mandate)}`;
  return presented.bearer ? `cred:bearer:${sha256(presented.bearer)}` : null;
}

export const RATE_WINDOW_MS = 60_000;

/**
 * Which of a scope's limits was hit, when a scope has several (docs/architecture.md, Rate limits by
 * caller); shown as `details.bucket`, with the wording of the message.
 */
export interface RateBucket {
  bucket: string;
  who: string;
  what: string;
}

export function rateLimitError(
  scope: 'ip' | 'credential',
  limit: number,
  retryAfterSeconds: number,
  bucket?: RateBucket,
): ProtocolError {
  const who = bucket?.who ?? (scope === 'ip' ? 'this client address' : 'this credential');
  const what = bucket?.what ?? (scope === 'ip' ? 'requests' : 'mutating requests');
  return protocolError(
    'rate_limit.exceeded',
    `Too many requests: ${who} may make ${limit} ${what} per minute. Retry after ${retryAfterSeconds} s.`,
    {
      hint: `Wait ${retryAfterSeconds} s (Retry-After) before the next request.`,
      details: {
        scope,
        limit,
        window_seconds: RATE_WINDOW_MS / 1000,
        retry_after_seconds: retryAfterSeconds,
        ...(bucket ? { bucket: bucket.bucket } : {}),
      },
      headers: { 'retry-after': String(retryAfterSeconds) },
    },
  );
}

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
