-- Accepts a batch of delayed items, or refuses it whole, as PUT does (ids contiguous, the
-- ledger moved once, counted buffered): each waits in LATER until its due time, then a
-- get moves it into the stream. KEYS[4..]: keyed, one idempotency key per item (a key
-- already known, or repeated in the batch, gives its job's id and adds nothing, as in
-- PUT). ARGV: 2 'in' (ARGV[3] ms from the server's clock now) or 'at' (ARGV[3] ms since
-- the Unix epoch, by the server's clock), then one payload per item. Reply: 'ok', the
-- first id (of the items accepted now), the due time, and when keyed per item its id and
-- 1 for a repeat (0: accepted now); or 'shutdown', 'noworkers', 'full', 'gone',
-- 'foreign'.
local n = #ARGV - 3
local keyed = #KEYS > 3
local m = redis.call('HMGET', META, 'state', 'had_workers', 'cap', 'hold_until', 'lease_ms',
  'repeat_ms')
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
-- Each item: a known id (a repeat), or the how-many-th fresh item of the batch it is (a
-- negative one: a repeat, in the batch, of that fresh item).
local known, order, fresh, seen = {}, {}, 0, {}
for i = 1, n do
  if keyed then
    local key = KEYS[3 + i]
    if seen[key] then
      order[i] = -seen[key]
    else
      local prior = redis.call('GET', key)
      if prior then
        known[i] = prior
      else
        fresh = fresh + 1
        seen[key] = fresh
        order[i] = fresh
      end
    end
  else
    fresh = fresh + 1
    order[i] = fresh
  end
end
local t = now_ms()
local due = tonumber(ARGV[3])
if ARGV[2] == 'in' then due = t + due end
local first = 0
if fresh > 0 then
  if state ~= 'open' then return {'shutdown'} end
  if m[2] == '1' then
    local held = tonumber(m[4] or '0')
    local holding = t < held and held - t <= tonumber(m[5])
    if not holding and redis.call('ZCOUNT', r.WRK, '(' .. t, '+inf') == 0 then
      return {'noworkers'}
    end
  end
  local cap = tonumber(m[3])
  if cap > 0 and redis.call('XLEN', S) - pending() + later() + fresh > cap then return {'full'} end
  first = redis.call('HINCRBY', LED, 'accepted', fresh) - fresh
  for i = 1, n do
    if order[i] and order[i] > 0 then
      local id = first + order[i] - 1
      redis.call('ZADD', LATER, due, id)
      redis.call('HSET', LATER_ITEMS, id, ARGV[3 + i])
      if keyed then redis.call('SET', KEYS[3 + i], id, 'PX', m[6]) end
    end
  end
end
local out = {'ok', first, due}
if keyed then
  for i = 1, n do
    if known[i] then
      out[#out + 1] = tonumber(known[i])
      out[#out + 1] = 1
    elseif order[i] > 0 then
      out[#out + 1] = first + order[i] - 1
      out[#out + 1] = 0
    else
      out[#out + 1] = first - order[i] - 1
      out[#out + 1] = 1
    end
  end
end
return out
