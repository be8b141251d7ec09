-- One atomic snapshot. buffered = length - pending, in_flight = pending.
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
local names = {'accepted', 'succeeded', 'rejected', 'uncertain', 'abandoned', 'discarded',
  'redelivered', 'stale', 'dead'}
local v = redis.call('HMGET', LED, unpack(names))
local last = redis.call('XREVRANGE', ENDS, '+', '-', 'COUNT', 1)[1]
local out = {'ok', state, last and last[1] or '0-0', redis.call('XLEN', S), pending(),
  redis.call('ZCOUNT', WRK, '(' .. now_ms(), '+inf')}
for i = 1, #names do out[#out + 1] = tonumber(v[i]) or 0 end
return out
