-- One atomic snapshot: the state, the last wake-up id, the stream's length, the pending
-- list's size (buffered = length - pending, in_flight = pending), live workers, then the
-- counters in the order of COUNTERS. Only reads.
local r = rare()
local state = redis.call('HGET', META, 'state')
if not state or state == 'rewound' or redis.call('TYPE', S).ok ~= 'stream' then return {'gone'} end
local v = redis.call('HMGET', LED, unpack(r.COUNTERS))
if not v[1] then return {'gone'} end
-- The wake-ups and workers are not part of the ledger: a foreign key there hides nothing.
local last = nil
if redis.call('TYPE', r.ENDS).ok == 'stream' then
  last = redis.call('XREVRANGE', r.ENDS, '+', '-', 'COUNT', 1)[1]
end
local workers = 0
if redis.call('TYPE', r.WRK).ok == 'zset' then
  workers = redis.call('ZCOUNT', r.WRK, '(' .. now_ms(), '+inf')
end
-- Delayed jobs are buffered: they count with the stream's length.
local waiting, bad = later()
if bad then return bad end
local out = {'ok', state, last and last[1] or '0-0', redis.call('XLEN', S) + waiting, pending(),
  workers}
for i = 1, #r.COUNTERS do
  local n = tonumber(v[i])
  if v[i] and not n then return {'foreign', LED, 'a non-number in ' .. r.COUNTERS[i]} end
  out[#out + 1] = n or 0
end
return out
