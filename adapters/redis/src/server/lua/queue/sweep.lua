-- The maintenance pass on the server. Ends expired deliveries that will not be delivered
-- again (policy Abandon or Uncertain, the last attempt, a closed queue, or taken out by a
-- shutdown_now that was never confirmed) and leaves the others for getters; removes
-- expired worker registrations; removes consumers that hold nothing and were idle longer
-- than ARGV[3] ms, with their resolve records (one consumer per handle would pile up
-- otherwise; a live one comes back with its next read), and clock samples not renewed
-- for ten leases. ARGV: 1 consumer, 2 max entries, 3 idle ms, 4 the handle's monotonic
-- clock (ms).
local me = ARGV[1]
local state = live()
if not state then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', WRK, 'zset', ENDS, 'stream', DEAD, 'stream',
  UNC, 'stream', CLK, 'hash'})
if bad then return bad end
local m = redis.call('HMGET', META, 'lease_ms', 'max_att')
local lease, maxatt = tonumber(m[1]), tonumber(m[2])
local t = now_ms()
local ended = 0
if clock_ok(me, ARGV[4], lease) then
  redis.call('ZREMRANGEBYSCORE', WRK, '-inf', t)
  for _, p in ipairs(redis.call('XPENDING', S, G, 'IDLE', lease, '-', '+', tonumber(ARGV[2]))) do
    local sid, owner, count = p[1], p[2], p[4]
    local how, list, why = fate(owner, count, state, maxatt)
    if how ~= 'redeliver' then
      end_expired(sid, owner, count, how, list, why)
      ended = ended + 1
    end
  end
end
if state == 'draining' and redis.call('XLEN', S) == 0 then
  redis.call('HSET', META, 'state', 'closed')
  wake('shutdown')
end
local prefix = string.sub(DONE, 1, #DONE - #me)
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', S, G)) do
  local f = fields_of(c)
  if f['pending'] == 0 and f['idle'] > tonumber(ARGV[3]) and f['name'] ~= me then
    redis.call('XGROUP', 'DELCONSUMER', S, G, f['name'])
    redis.call('DEL', prefix .. f['name'])
  end
end
local samples = redis.call('HGETALL', CLK)
for i = 1, #samples, 2 do
  local w = tonumber(string.match(samples[i + 1], '^(-?%d+) '))
  if samples[i] ~= me and (not w or w < t - 10 * lease) then redis.call('HDEL', CLK, samples[i]) end
end
return {'ok', ended}
