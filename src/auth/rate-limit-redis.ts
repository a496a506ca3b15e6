/**
 * The rate counters of rate-limit.ts on Redis, so limits hold across service processes. Each key is
 * a sorted set of call timestamps (score = epoch ms); every operation is one Lua script, so
 * check-and-count is atomic. Keys: `<prefix>rate:req:<key>` and `<prefix>rate:mandate:<key>`. All the
 * budgets of one call (credential, issuer, address…) are checked and counted by one script call: one
 * round trip per call instead of one per budget. A Redis Cluster cannot run a script over keys of
 * several slots, so there each budget is its own script call (sent together, still one round trip) and
 * a refused call takes back what the others counted.
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
  type Budget,
  MAX_MANDATE_LOG_ENTRIES,
  type MandateRateCounter,
  MemoryRateCounters,
  type RateDecision,
  type Refusal,
  type RequestRateCounter,
} from './rate-limit.js';

/**
 * KEYS: the budgets' logs. ARGV: now, window ms, member, then each budget's limit. Trims every
 * window first; the first budget that is full refuses the call ({0, its index (0-based), the
 * timestamp whose departure frees a slot}) and nothing is counted; else the call is counted on all: {1}.
 */
const TAKE_ALL_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for i = 1, #KEYS do
  local limit = tonumber(ARGV[3 + i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  local count = redis.call('ZCARD', KEYS[i])
  if count >= limit then
    local entry = redis.call('ZRANGE', KEYS[i], count - limit, count - limit, 'WITHSCORES')
    return {0, i - 1, entry[2]}
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[i], window)
end
return {1}
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

type TakeReply = [1] | [0, number, string];

interface RateScripts {
  conclaveRateTakeAll(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<TakeReply>;
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
  /** A Cluster runs each budget's script on its own slot (see above). */
  private readonly cluster: boolean;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    this.cluster = (redis as { isCluster?: boolean }).isCluster === true;
    redis.defineCommand('conclaveRateTakeAll', { lua: TAKE_ALL_SCRIPT });
    redis.defineCommand('conclaveRateCheck', { numberOfKeys: 1, lua: CHECK_SCRIPT });
    redis.defineCommand('conclaveRateRecord', { numberOfKeys: 1, lua: RECORD_SCRIPT });
    this.redis = redis as Redis & RateScripts;
  }

  async take(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    return (await this.takeAll([{ key, limit }], windowMs, now))?.decision ?? ALLOWED;
  }

  async takeAll(budgets: readonly Budget[], windowMs: number, now: number): Promise<Refusal | null> {
    const local = await this.local.takeAll(budgets, windowMs, now);
    const shared = this.takeShared(budgets, windowMs, now).catch(() => undefined);
    const decided = await within(shared, REDIS_DECISION_MS, () => undefined);
    return decided === undefined ? local : decided;
  }

  private async takeShared(budgets: readonly Budget[], windowMs: number, now: number): Promise<Refusal | null> {
    const counted = member(now);
    if (!this.cluster || budgets.length === 1) return this.takeOn(budgets, windowMs, now, counted);
    const replies = await Promise.all(budgets.map((budget) => this.takeOn([budget], windowMs, now, counted)));
    const first = replies.findIndex((reply) => reply !== null);
    if (first === -1) return null;
    // Take back what the budgets that allowed the call counted: a refused call counts on none.
    await Promise.all(
      budgets.filter((_, i) => replies[i] === null).map(({ key }) => this.redis.zrem(this.requestKey(key), counted)),
    );
    return { index: first, decision: replies[first]!.decision };
  }

  private async takeOn(
    budgets: readonly Budget[],
    windowMs: number,
    now: number,
    counted: string,
  ): Promise<Refusal | null> {
    const reply = await this.redis.conclaveRateTakeAll(
      budgets.length,
      ...budgets.map(({ key }) => this.requestKey(key)),
      now,
      windowMs,
      counted,
      ...budgets.map(({ limit }) => limit),
    );
    if (reply[0] === 1) return null;
    return { index: reply[1], decision: decision(0, reply[2], windowMs, now) };
  }

  private requestKey(key: string): string {
    return `${this.prefix}rate:req:${key}`;
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
