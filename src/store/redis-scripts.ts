/**
 * Lua scripts of the Redis store. Every script touches keys of one hash slot only: either one
 * room's `{slug}`-tagged keys, or one deadline-index shard.
 * Redis does not roll a script back when it fails half-way, so each script checks everything
 * before its first write.
 */
import { COMPACTED_REPLY } from './redis-compact-scripts.js';

/** Prefix of the error replies that mean "conflict"; the adapter maps them to StoreConflictError. */
export const CONFLICT_REPLY = 'CONCLAVE_CONFLICT';

/**
 * KEYS: room hash, events zset, event-ids hash, receipts list, lock, archived-decisions zset, the
 * lock's queue (redis-room-lock.ts), then one key per idempotency record, then the room's webhooks hash.
 * ARGV: expected_version, fence ('' = none), snapshot, next_deadline ('' = none),
 *   event count n, then n × (seq, id, JSON), then receipt count m, then m × (sequence, JSON),
 *   then idempotency record count k, then k × (JSON, PX), then archived count a, then a × (seq, JSON),
 *   then expected revision ('' = do not check), then this commit's revision, then what becomes of
 *   the fenced lock: '1' to release it with the commit, '2' to release it only if someone waits
 *   for it and otherwise keep it for another TTL (lingering, redis-room-lease.ts), '' to keep it
 *   as it is; then the lock's wake channel, the slug and the TTL (ms, for '2'); then the room's
 *   commit channel ('' = announce nothing), SPUBLISHed (it shares the room's hash slot), the origin
 *   its announcement `{origin, slug, head}` carries, and the broadcast channel of earlier versions
 *   ('' = none), PUBLISHed flagged `sharded` (COMMIT_NOTICES=both, engagement/redis-fanout.ts).
 * A compacted room (redis-compaction.ts) is refused with COMPACTED_REPLY before any check of its history.
 * Returns { version, head, revision, kept, subscribed }: kept is 1 when a '2' commit kept the lock;
 * subscribed is 1 when the room has webhooks (so the engagement reads them only then).
 */
export const COMMIT_SCRIPT = `
local room, events, eventIds, receipts, lock, archived, lockQueue = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local expected = tonumber(ARGV[1])
local fence = ARGV[2]
local conflict = function(why) return redis.error_reply('${CONFLICT_REPLY} ' .. why) end

local stored = redis.call('HMGET', room, 'version', 'head', 'chain_len', 'revision', 'compacted')
local version, head, chainLen = 0, 0, 0
if stored[1] then
  version, head, chainLen = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
end
if expected == 0 then
  if stored[1] then return conflict('room already exists') end
elseif version ~= expected then
  return conflict('room is at version ' .. version .. ', the commit expected ' .. expected)
end
if fence ~= '' and redis.call('GET', lock) ~= fence then
  return conflict('the lock token no longer holds the room')
end

local n = tonumber(ARGV[5])
local receiptAt = 6 + n * 3
local m = tonumber(ARGV[receiptAt])
local idemAt = receiptAt + 1 + m * 2
local k = tonumber(ARGV[idemAt])
local archivedAt = idemAt + 1 + k * 2
local a = tonumber(ARGV[archivedAt])
local expectedRevision, revision = ARGV[archivedAt + 1 + a * 2], ARGV[archivedAt + 2 + a * 2]
if expected ~= 0 and expectedRevision ~= '' and stored[4] and stored[4] ~= expectedRevision then
  return conflict('room is at revision ' .. stored[4] .. ', the commit expected ' .. expectedRevision)
end
if stored[5] then return redis.error_reply('${COMPACTED_REPLY} room is compacted') end
for i = 0, n - 1 do
  if tonumber(ARGV[6 + i * 3]) ~= head + 1 + i then
    return conflict('events must start at seq ' .. (head + 1))
  end
  if redis.call('HEXISTS', eventIds, ARGV[7 + i * 3]) == 1 then
    return conflict('event id ' .. ARGV[7 + i * 3] .. ' already stored')
  end
end
for j = 0, m - 1 do
  if tonumber(ARGV[receiptAt + 1 + j * 2]) ~= chainLen + 1 + j then
    return conflict('receipts must start at ' .. (chainLen + 1))
  end
end

for i = 0, n - 1 do
  local seq = ARGV[6 + i * 3]
  redis.call('ZADD', events, seq, ARGV[8 + i * 3])
  redis.call('HSET', eventIds, ARGV[7 + i * 3], seq)
end
for j = 0, m - 1 do
  redis.call('RPUSH', receipts, ARGV[receiptAt + 2 + j * 2])
end
version, head, chainLen = version + 1, head + n, chainLen + m
redis.call('HSET', room, 'version', version, 'head', head, 'chain_len', chainLen, 'snapshot', ARGV[3], 'revision', revision)
if ARGV[4] == '' then
  redis.call('HDEL', room, 'next_deadline')
else
  redis.call('HSET', room, 'next_deadline', ARGV[4])
end
for i = 0, k - 1 do
  redis.call('SET', KEYS[8 + i], ARGV[idemAt + 1 + i * 2], 'PX', ARGV[idemAt + 2 + i * 2])
end
for i = 0, a - 1 do
  redis.call('ZADD', archived, ARGV[archivedAt + 1 + i * 2], ARGV[archivedAt + 2 + i * 2])
end
local release, kept = ARGV[archivedAt + 3 + a * 2], 0
if fence ~= '' and release == '2' and redis.call('LLEN', lockQueue) == 0 then
  redis.call('PEXPIRE', lock, ARGV[archivedAt + 6 + a * 2])
  kept = 1
elseif fence ~= '' and (release == '1' or release == '2') then
  redis.call('DEL', lock)
  if redis.call('LLEN', lockQueue) > 0 then
    redis.call('PUBLISH', ARGV[archivedAt + 4 + a * 2], ARGV[archivedAt + 5 + a * 2])
  end
end
local channel, origin, slug = ARGV[archivedAt + 7 + a * 2], ARGV[archivedAt + 8 + a * 2], ARGV[archivedAt + 5 + a * 2]
if channel ~= '' then
  redis.call('SPUBLISH', channel, cjson.encode({ origin = origin, slug = slug, head = head }))
end
local broadcast = ARGV[archivedAt + 9 + a * 2]
if broadcast ~= nil and broadcast ~= '' then
  redis.call('PUBLISH', broadcast, cjson.encode({ origin = origin, slug = slug, head = head, sharded = true }))
end
return { version, head, revision, kept, redis.call('EXISTS', KEYS[#KEYS]) }
`;

/**
 * KEYS: room hash, events zset, event-ids hash, receipts list, archived decisions, then the room's engagement keys
 * (webhooks, deliveries, opener wakes), then its compact value (redis-compaction.ts). Returns 1 when a room was removed.
 */
export const DELETE_ROOM_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', unpack(KEYS))
return 1
`;

/**
 * KEYS: room hash. ARGV: known version, known revision ('' = none).
 * Returns nil for no room, { 'unchanged' } while the room is still at the known version and revision,
 * else the fields load() reads: { version, head, snapshot, next_deadline, revision, compacted } (a
 * compacted room's snapshot is in its compact value: the caller reads it there). A cached room
 * that is current is so checked in one round trip without sending its snapshot.
 */
export const LOAD_IF_CHANGED_SCRIPT = `
local stored = redis.call('HMGET', KEYS[1], 'version', 'revision')
if not stored[1] then return false end
if tonumber(stored[1]) == tonumber(ARGV[1]) and (stored[2] or '') == ARGV[2] then return { 'unchanged' } end
return redis.call('HMGET', KEYS[1], 'version', 'head', 'snapshot', 'next_deadline', 'revision', 'compacted')
`;

/** KEYS: lock. ARGV: token, ttl ms. Extends the lock only while it still holds our token. */
export const RENEW_LOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * KEYS: deadlines zset. ARGV: slug, score seen, corrected score ('' = remove).
 * Corrects a stale deadline entry unless a newer commit has rewritten it since it was read.
 */
export const REPAIR_DEADLINE_SCRIPT = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
`;
