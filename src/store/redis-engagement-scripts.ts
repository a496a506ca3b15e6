/**
 * Lua scripts of the Redis engagement store. Each touches only one room's `{slug}`-tagged keys.
 *
 * Webhooks live in one hash per room: field `<id>` holds the immutable JSON record, and the mutable
 * parts sit beside it as `<id>:cursor`, `<id>:streak`, `<id>:refusals`, `<id>:verified_at`,
 * `<id>:disabled_at` and `<id>:reason`, so no script ever re-encodes JSON. Deliveries live in one hash
 * per room: field `<webhook id>|<event id>`, value `"<status> <attempts> <time> <seq>"`, where the time
 * is the next attempt's while pending and the settling's once settled (`-` in rows settled before
 * settle times were kept).
 */

/** KEYS: webhooks hash. ARGV: id, record JSON, cursor. */
export const CREATE_WEBHOOK_SCRIPT = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1] .. ':cursor', ARGV[3], ARGV[1] .. ':streak', 0)
return 1
`;

/** KEYS: webhooks hash. ARGV: id, at, reason. Returns 0 for an unknown id. */
export const DISABLE_WEBHOOK_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[1] .. ':disabled_at', ARGV[2]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1] .. ':reason', ARGV[3])
end
return 1
`;

/** KEYS: webhooks hash, deliveries hash. ARGV: id, from, through, at, n, then n × (event id, seq). */
export const ENQUEUE_SCRIPT = `
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], id) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[1], id .. ':disabled_at') == 1 then return 0 end
if tonumber(redis.call('HGET', KEYS[1], id .. ':cursor')) ~= tonumber(ARGV[2]) then return 0 end
for i = 0, tonumber(ARGV[5]) - 1 do
  redis.call('HSETNX', KEYS[2], id .. '|' .. ARGV[6 + i * 2], 'pending 0 ' .. ARGV[4] .. ' ' .. ARGV[7 + i * 2])
end
redis.call('HSET', KEYS[1], id .. ':cursor', ARGV[3])
return 1
`;

const PARSE_DELIVERY = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local status, attempts, nextAt, seq = string.match(value, '^(%S+) (%S+) (%S+) (%S+)$')
`;

const DUE_NOW = `${PARSE_DELIVERY}
if status ~= 'pending' or tonumber(attempts) ~= tonumber(ARGV[2]) or tonumber(nextAt) > tonumber(ARGV[3]) then
  return 0
end
`;

/**
 * KEYS: deliveries hash, webhooks hash. ARGV: field, attempts, now, lease until. Nothing is claimed for
 * a disabled subscription: an attempt picked before its disabling landed is not sent.
 */
export const CLAIM_SCRIPT = `${DUE_NOW}
local webhook = string.match(ARGV[1], '^([^|]+)|')
if redis.call('HEXISTS', KEYS[2], webhook .. ':disabled_at') == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], 'pending ' .. (tonumber(attempts) + 1) .. ' ' .. ARGV[4] .. ' ' .. seq)
return 1
`;

/** KEYS: deliveries hash. ARGV: field, attempts, now, until. A claim that does not count an attempt. */
export const DEFER_SCRIPT = `${DUE_NOW}
redis.call('HSET', KEYS[1], ARGV[1], 'pending ' .. attempts .. ' ' .. ARGV[4] .. ' ' .. seq)
return 1
`;

/**
 * KEYS: deliveries hash, webhooks hash. ARGV: field, webhook id, kind (delivered | verified | retry |
 * exhausted | refused | dropped), at (retry due time, or the settling time), disable after (streak
 * length), reason (of a disabling).
 */
export const SETTLE_SCRIPT = `${PARSE_DELIVERY}
if status ~= 'pending' then return 0 end
local kind, id, at = ARGV[3], ARGV[2], ARGV[4]
if kind == 'retry' then
  redis.call('HSET', KEYS[1], ARGV[1], 'pending ' .. attempts .. ' ' .. at .. ' ' .. seq)
  return 1
end
local settled = kind
if kind == 'verified' then settled = 'delivered' end
redis.call('HSET', KEYS[1], ARGV[1], settled .. ' ' .. attempts .. ' ' .. at .. ' ' .. seq)
if redis.call('HEXISTS', KEYS[2], id) == 0 then return 1 end
local function disable()
  if redis.call('HSETNX', KEYS[2], id .. ':disabled_at', at) == 1 then
    redis.call('HSET', KEYS[2], id .. ':reason', ARGV[6])
  end
end
if kind == 'delivered' or kind == 'verified' then
  redis.call('HSET', KEYS[2], id .. ':streak', 0, id .. ':refusals', 0)
  if kind == 'verified' then redis.call('HSETNX', KEYS[2], id .. ':verified_at', at) end
elseif kind == 'exhausted' then
  if redis.call('HINCRBY', KEYS[2], id .. ':streak', 1) >= tonumber(ARGV[5]) then disable() end
elseif kind == 'refused' then
  if redis.call('HINCRBY', KEYS[2], id .. ':refusals', 1) >= tonumber(ARGV[5]) then disable() end
end
return 1
`;

/**
 * KEYS: deliveries hash. ARGV: field, before. Removes a delivery settled before "before" (or settled
 * without a recorded time); returns 1 when removed, 0 when missing, 2 while it is pending, 3 when it
 * was settled too recently.
 */
export const PRUNE_SCRIPT = `${PARSE_DELIVERY}
if status == 'pending' then return 2 end
if nextAt ~= '-' and tonumber(nextAt) >= tonumber(ARGV[2]) then return 3 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`;

/**
 * KEYS: due index. ARGV: member, score seen, corrected score. Rescores an index entry unless another
 * writer changed it since it was read.
 */
export const RESCORE_DUE_SCRIPT = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
`;
