-- Accepts a batch of delayed items, or refuses it whole, as PUT does (ids contiguous, the
-- ledger moved once, counted buffered): each waits in LATER until its due time, then a
-- get moves it into the stream. ARGV: 2 'in' (ARGV[3] ms from the server's clock now) or
-- 'at' (ARGV[3] ms since the Unix epoch, by the server's clock), then one payload per
-- item. Reply: 'ok', the first id, the due time; or 'shutdown', 'noworkers', 'full',
-- 'gone', 'foreign'.
local n = #ARGV - 3
local m = redis.call('HMGET', META, 'state', 'had_workers', 'cap', 'hold_until', 'lease_ms')
local state = m[1]
if not state or state == 'rewound' or not redis.call('HGET', LED, 'accepted') then
  return {'gone'}
end
local r = rare()
local found = redis.call('TYPE', S).ok
if found ~= 'stream' then
  if found == 'none' then return {'gone'} end
  return {'foreign', S, 'a ' .. found}
end
local bad = r.check({LATER, 'zset', LATER_ITEMS, 'hash'})
if bad then return bad end
if state ~= 'open' then return {'shutdown'} end
local t = now_ms()
if m[2] == '1' then
  local held = tonumber(m[4] or '0')
  local holding = t < held and held - t <= tonumber(m[5])
  if not holding and redis.call('ZCOUNT', r.WRK, '(' .. t, '+inf') == 0 then
    return {'noworkers'}
  end
end
local cap = tonumber(m[3])
if cap > 0 and redis.call('XLEN', S) - pending() + later() + n > cap then return {'full'} end
local due = tonumber(ARGV[3])
if ARGV[2] == 'in' then due = t + due end
local first = redis.call('HINCRBY', LED, 'accepted', n) - n
for i = 1, n do
  local id = first + i - 1
  redis.call('ZADD', LATER, due, id)
  redis.call('HSET', LATER_ITEMS, id, ARGV[3 + i])
end
return {'ok', first, due}
