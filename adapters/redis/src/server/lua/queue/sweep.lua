-- The maintenance pass on the server. Ends expired deliveries that will not be delivered
-- again (policy Abandon or Uncertain, the last attempt, a closed queue, or taken out by a
-- shutdown_now that was never confirmed); puts those that will back among the delayed
-- jobs if the queue has a redelivery backoff, and leaves them for getters otherwise; removes
-- expired worker registrations; removes consumers that hold nothing and were idle longer
-- than ARGV[4] ms, with what is kept for them (one consumer per handle would pile up
-- otherwise; a live one comes back with its next read), and clock samples not renewed
-- for ten leases. ARGV: 2 consumer, 3 max entries, 4 idle ms, 5 the handle's monotonic
-- clock (ms).
local r = rare()
local me = ARGV[2]
local m = redis.call('HMGET', META, 'state', 'lease_ms', 'max_att')
local state = m[1]
if not state or state == 'rewound' then return {'gone'} end
if redis.call('TYPE', S).ok ~= 'stream' then return {'gone'} end
local bad = r.check({r.ENDS, 'stream', r.DEAD, 'stream', r.UNC, 'stream', r.CLK, 'hash', r.WRK, 'zset',
  LATER, 'zset', LATER_ITEMS, 'hash'}) or r.check_backoff()
if bad then return bad end
local lease, maxatt = tonumber(m[2]), tonumber(m[3])
local t = now_ms()
local ended = 0
if r.clock_ok(me, ARGV[5], lease) then
  redis.call('ZREMRANGEBYSCORE', r.WRK, '-inf', t)
  for _, p in ipairs(redis.call('XPENDING', S, G, 'IDLE', lease, '-', '+', tonumber(ARGV[3]))) do
    local sid, owner = p[1], p[2]
    local e = redis.call('XRANGE', S, sid, sid)[1]
    local count = earlier(e and e[2]) + p[4]
    local how, list, why = r.fate(owner, count, state, maxatt)
    if how ~= 'redeliver' then
      r.end_expired(sid, owner, count, how, list, why)
      ended = ended + 1
    elseif e and ours(e[2]) then
      -- With a redelivery backoff it waits among the delayed jobs from now on.
      local delay = r.redelay(tonumber(e[2][2]), count)
      if delay then r.defer(sid, e[2], count, delay) end
    end
  end
end
if state == 'draining' and empty() then
  r.wake('shutdown')
  redis.call('HSET', META, 'state', 'closed')
end
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', S, G)) do
  local f = r.fields_of(c)
  if f['pending'] == 0 and f['idle'] > tonumber(ARGV[4]) and f['name'] ~= me then
    redis.call('XGROUP', 'DELCONSUMER', S, G, f['name'])
    redis.call('HDEL', META, 'v:' .. f['name'])
  end
end
local samples = redis.call('HGETALL', r.CLK)
for i = 1, #samples, 2 do
  local w = tonumber(string.match(samples[i + 1], '^(-?%d+) '))
  if samples[i] ~= me and (not w or w < t - 10 * lease) then redis.call('HDEL', r.CLK, samples[i]) end
end
return {'ok', ended}
