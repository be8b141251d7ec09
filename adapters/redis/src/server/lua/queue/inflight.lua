-- What is in flight, after ARGV[2] (an entry id, exclusive; '-' from the start), at most
-- ARGV[3] entries, and the lease in ms (ARGV[4]). Only reads. Reply: 'ok', then per
-- entry: entry, job id ('' for an entry something else wrote, or one deleted), holder
-- (the consumer), lease age (ms idle in the pending list), delivery count, and '1' if
-- the holder is alive: a handle of that consumer looked at the server's clock within one
-- lease (every maintenance pass and every get that reclaims does), or has a worker
-- whose heartbeat has not expired. A `shutdown_now` step's holder `<consumer>/drain` is
-- its handle's.
local r = rare()
local state = redis.call('HGET', META, 'state')
if not state or state == 'rewound' or redis.call('TYPE', S).ok ~= 'stream' then return {'gone'} end
local after, count, lease = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local start = after == '-' and '-' or '(' .. after
local rows = redis.call('XPENDING', S, G, start, '+', count)
local t = now_ms()
local alive = {}
if redis.call('TYPE', r.CLK).ok == 'hash' then
  local samples = redis.call('HGETALL', r.CLK)
  for i = 1, #samples, 2 do
    local w = tonumber(string.match(samples[i + 1], '^(-?%d+) '))
    if w and t - w <= lease then alive[samples[i]] = true end
  end
end
if redis.call('TYPE', r.WRK).ok == 'zset' then
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', r.WRK, '(' .. t, '+inf')) do
    alive[string.match(member, '^(.*)/[^/]*$') or member] = true
  end
end
local out = {'ok'}
for _, p in ipairs(rows) do
  local sid, owner = p[1], p[2]
  local e = redis.call('XRANGE', S, sid, sid)[1]
  local id = ''
  if e and ours(e[2]) then id = e[2][2] end
  local base = string.match(owner, '^(.*)/drain$') or owner
  out[#out + 1] = sid
  out[#out + 1] = id
  out[#out + 1] = owner
  out[#out + 1] = p[3]
  out[#out + 1] = p[4]
  out[#out + 1] = alive[base] and '1' or '0'
end
return out
