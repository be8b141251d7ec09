-- One atomic snapshot: the state, the last wake-up id, the stream's length, the pending
-- list's size (buffered = length - pending, in_flight = pending), live workers, then the
-- counters in the order of COUNTERS.
local state = live()
if not state then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', WRK, 'zset'})
if bad then return bad end
local v = redis.call('HMGET', LED, unpack(COUNTERS))
-- The wake-ups are not part of the snapshot: a foreign key there does not hide it.
local last = nil
if redis.call('TYPE', ENDS).ok == 'stream' then
  last = redis.call('XREVRANGE', ENDS, '+', '-', 'COUNT', 1)[1]
end
local out = {'ok', state, last and last[1] or '0-0', redis.call('XLEN', S), pending(),
  redis.call('ZCOUNT', WRK, '(' .. now_ms(), '+inf')}
for i = 1, #COUNTERS do out[#out + 1] = tonumber(v[i]) or 0 end
return out
