/**
 * The rate counters of rate-limit.ts on Redis, so limits hold across service processes. Each key is
 * a sorted set of call timestamps (score = epoch ms); every operation is one Lua script, so
 * check-and-count is atomic. Keys: `<prefix>rate:req:<key>` and `<prefix>rate:mandate:<key>`.
 *
 * A request limit must never become "unlimited" because Redis is slow or away (an attacker who can
 * stall Redis, or just load it, would otherwise lift every limit): each request is also counted in
 * this process's own counters, and when Redis has not answered within REDIS_DECISION_MS the local
 * count decides. Degraded, a client gets at most the limit per process instead of per deployment.
 * See docs/architecture.md, "Robustness at the edges".
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { within } from '../runtime/within.js';
import {
  ALLOWED,
  MAX_MANDATE_LOG_ENTRIES,
  type MandateRateCounter,
  MemoryRateCounters,
  type RateDecision,
  type RequestRateCounter,
} from './rate-limit.js';

// Trims the window, then either counts the call or returns the timestamp whose departure frees a slot.
const TAKE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local entry = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return {0, entry[2]}
`;

// Counts the entries of this window only: other mandates with longer windows share the log.
const CHECK_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local count = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
if count < limit then return {1, 0} end
local entry = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', count - limit, 1)
return {0, entry[2]}
`;

const RECORD_SCRIPT = `
local now = tonumber(ARGV[1])
local retain = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
if redis.call('PTTL', KEYS[1]) < retain then redis.call('PEXPIRE', KEYS[1], retain) end
return 1
`;

interface RateScripts {
  conclaveRateTake(
    key: string,
    now: number,
    windowMs: number,
    limit: number,
    member: string,
  ): Promise<[number, string]>;
  conclaveRateCheck(key: string, now: number, windowMs: number, limit: number): Promise<[number, string]>;
  conclaveRateRecord(key: string, now: number, retainMs: number, member: string, maxEntries: number): Promise<number>;
}

/**
 * How long a request limit waits for Redis before the local count decides. A healthy Redis runs the
 * script in well under a millisecond on loopback and a few across a network, so only a stalled or
 * overloaded Redis takes 50 ms; it is also half of the HTTP hook's own 100 ms bound, so the local
 * decision always arrives before the hook would give up and let the request through.
 */
export const REDIS_DECISION_MS = 50;

export class RedisRateCounters implements RequestRateCounter, MandateRateCounter {
  private readonly redis: Redis & RateScripts;
  /** This process's share of every request limit: the decision when Redis does not answer in time. */
  private readonly local = new MemoryRateCounters();

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('conclaveRateTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('conclaveRateCheck', { numberOfKeys: 1, lua: CHECK_SCRIPT });
    redis.defineCommand('conclaveRateRecord', { numberOfKeys: 1, lua: RECORD_SCRIPT });
    this.redis = redis as Redis & RateScripts;
  }

  async take(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    const local = await this.local.take(key, limit, windowMs, now);
    const shared = this.takeShared(key, limit, windowMs, now).catch(() => null);
    return (await within(shared, REDIS_DECISION_MS, () => null)) ?? local;
  }

  private async takeShared(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    const [allowed, leaving] = await this.redis.conclaveRateTake(
      `${this.prefix}rate:req:${key}`,
      now,
      windowMs,
      limit,
      member(now),
    );
    return decision(allowed, leaving, windowMs, now);
  }

  async check(key: string, limit: number, windowSec: number, now: number): Promise<RateDecision> {
    const windowMs = windowSec * 1000;
    const [allowed, leaving] = await this.redis.conclaveRateCheck(
      `${this.prefix}rate:mandate:${key}`,
      now,
      windowMs,
      limit,
    );
    return decision(allowed, leaving, windowMs, now);
  }

  async record(key: string, now: number, windowSec: number): Promise<void> {
    await this.redis.conclaveRateRecord(
      `${this.prefix}rate:mandate:${key}`,
      now,
      windowSec * 1000,
      member(now),
      MAX_MANDATE_LOG_ENTRIES,
    );
  }
}

/** Set members must be unique even for calls in the same millisecond. */
function member(now: number): string {
  return `${now}:${randomBytes(6).toString('base64url')}`;
}

function decision(allowed: number, leaving: string, windowMs: number, now: number): RateDecision {
  if (allowed === 1) return ALLOWED;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((Number(leaving) + windowMs - now) / 1000)) };
}
