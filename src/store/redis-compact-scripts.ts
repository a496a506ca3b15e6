/**
 * Lua scripts of compact rooms (docs/architecture.md, Storage, "Compact rooms"). A compacted room's
 * hash keeps its version, head, chain_len, revision and next_deadline, loses its snapshot, and says
 * `compacted` = a token naming this compaction; the room's history is one value under `:compact`.
 * Every script touches one room's `{slug}` keys only, and checks before its first write.
 *
 * All take KEYS: room hash, compact value, events zset, event-ids hash, receipts list, archived zset.
 */

/** Prefix of the commit script's refusal of a compacted room: the committer expands it and commits again. */
export const COMPACTED_REPLY = 'CONCLAVE_COMPACTED';

/**
 * ARGV: what to read — 'load'; 'events', after seq, limit; 'event', id; 'receipts'; 'archived', after
 * seq. Returns { 0, the expanded layout's answer } or, for a compacted room, { 1, the compact value,
 * { version, head, next_deadline, revision, compacted } }: the answer and the layout in one read.
 */
export const READ_ROOM_SCRIPT = `
local room = KEYS[1]
if redis.call('HEXISTS', room, 'compacted') == 1 then
  return { 1, redis.call('GET', KEYS[2]), redis.call('HMGET', room, 'version', 'head', 'next_deadline', 'revision', 'compacted') }
end
local mode = ARGV[1]
if mode == 'load' then
  return { 0, redis.call('HMGET', room, 'version', 'head', 'snapshot', 'next_deadline', 'revision') }
elseif mode == 'events' then
  return { 0, redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[2], '+inf', 'LIMIT', 0, ARGV[3]) }
elseif mode == 'event' then
  local seq = redis.call('HGET', KEYS[4], ARGV[2])
  if not seq then return { 0, {} } end
  return { 0, redis.call('ZRANGEBYSCORE', KEYS[3], seq, seq) }
elseif mode == 'receipts' then
  return { 0, redis.call('LRANGE', KEYS[5], 0, -1) }
end
return { 0, redis.call('ZRANGEBYSCORE', KEYS[6], '(' .. ARGV[2], '+inf') }
`;

/**
 * No ARGV. Everything a compaction reads, in one read: { { version, revision, compacted, snapshot,
 * next_deadline }, events, receipts, archived with scores }; or only the fields but the snapshot
 * when the room is absent, already compacted, has a deadline, or its snapshot names no conclusion
 * object (a live room: the sweep passes over it without reading its history). The caller still
 * checks the conclusion in the snapshot it gets: this filter only spares the reads.
 */
export const GATHER_ROOM_SCRIPT = `
local room = KEYS[1]
local fields = redis.call('HMGET', room, 'version', 'revision', 'compacted', 'snapshot', 'next_deadline')
if not fields[1] or fields[3] or fields[5] or not string.find(fields[4] or '', '"conclusion":{', 1, true) then
  fields[4] = false
  return { fields, {}, {}, {} }
end
return {
  fields,
  redis.call('ZRANGE', KEYS[3], 0, -1),
  redis.call('LRANGE', KEYS[5], 0, -1),
  redis.call('ZRANGE', KEYS[6], 0, -1, 'WITHSCORES'),
}
`;

/**
 * KEYS as above, then the room's lock. ARGV: the version and revision the value was made from, the
 * compact value, this compaction's token. Writes the value and deletes the expanded keys in one step,
 * only while the room is still expanded at that version and revision (a commit since, or another
 * compaction, leaves it alone), nobody holds its lock (a holder is about to write it: retention,
 * say, which expanded it) and it was not expanded moments ago (the expansion's marker, below, is
 * still under \`:compact\`). Returns 1 when compacted.
 */
export const COMPACT_ROOM_SCRIPT = `
local room = KEYS[1]
local stored = redis.call('HMGET', room, 'version', 'revision', 'compacted')
if not stored[1] or stored[3] or tonumber(stored[1]) ~= tonumber(ARGV[1]) or (stored[2] or '') ~= ARGV[2] then
  return 0
end
if redis.call('EXISTS', KEYS[7]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('HSET', room, 'compacted', ARGV[4])
redis.call('HDEL', room, 'snapshot')
-- Written afresh: a hash that once held the snapshot stays a hashtable (~470 B) after losing it,
-- where its few short fields written anew make a listpack (~100 B).
local rest = redis.call('HGETALL', room)
redis.call('DEL', room)
redis.call('HSET', room, unpack(rest))
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6])
return 1
`;

/**
 * ARGV: the compaction token the value was read under, the hold in ms, the snapshot, event count n,
 * then n × (seq, id, JSON), receipt count m, then m × JSON, archived count a, then a × (seq, bytes).
 * Writes the expanded layout back in one step, only while the room is still compacted under that
 * token, and replaces the compact value with a marker that lapses after the hold: until then no
 * compaction takes the room back, so the write the expansion was for always gets its turn (a
 * compactor as eager as can be could otherwise win every round against it). Returns 1 when expanded.
 */
export const EXPAND_ROOM_SCRIPT = `
local room = KEYS[1]
if redis.call('HGET', room, 'compacted') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  redis.call('ZADD', KEYS[3], ARGV[5 + i * 3], ARGV[7 + i * 3])
  redis.call('HSET', KEYS[4], ARGV[6 + i * 3], ARGV[5 + i * 3])
end
local receiptAt = 5 + n * 3
local m = tonumber(ARGV[receiptAt])
for j = 1, m do
  redis.call('RPUSH', KEYS[5], ARGV[receiptAt + j])
end
local archivedAt = receiptAt + m + 1
for i = 0, tonumber(ARGV[archivedAt]) - 1 do
  redis.call('ZADD', KEYS[6], ARGV[archivedAt + 1 + i * 2], ARGV[archivedAt + 2 + i * 2])
end
redis.call('HSET', room, 'snapshot', ARGV[3])
redis.call('HDEL', room, 'compacted')
redis.call('SET', KEYS[2], 'expanded', 'PX', ARGV[2])
return 1
`;
