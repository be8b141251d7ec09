-- Accepts a batch of items, or refuses it whole: the ids are contiguous, the ledger moves
-- once. ARGV: 1 '1' if keyed, then one payload per item; keyed: KEYS[11..] hold one
-- idempotency key per item. A key already known (or repeated in the batch) gives its
-- job's id and adds nothing. Reply: 'ok' then per item its id and 1 for a keyed repeat
-- (0: accepted now); or 'shutdown', 'noworkers', 'full', 'gone', 'foreign'.
local keyed = ARGV[1] == '1'
local n = #ARGV - 1
local state = live()
if not state then return {'gone'} end
local need = {S, 'stream!', LED, 'hash!', WRK, 'zset'}
if keyed then
  for i = 1, n do
    need[#need + 1] = KEYS[10 + i]
    need[#need + 1] = 'string'
  end
end
local bad = check(need)
if bad then return bad end
-- Each item: a known id (a repeat), or the how-many-th fresh item of the batch it is.
local known, order, fresh, seen = {}, {}, 0, {}
for i = 1, n do
  local prior = nil
  if keyed then
    local key = KEYS[10 + i]
    if seen[key] then
      order[i] = -seen[key]
    else
      prior = redis.call('GET', key)
    end
    if prior then
      known[i] = prior
    elseif not seen[key] then
      fresh = fresh + 1
      seen[key] = fresh
      order[i] = fresh
    end
  else
    fresh = fresh + 1
    order[i] = fresh
  end
end
local first = 0
if fresh > 0 then
  if state ~= 'open' then return {'shutdown'} end
  local m = redis.call('HMGET', META, 'had_workers', 'cap', 'repeat_ms', 'hold_until', 'lease_ms')
  if m[1] == '1' then
    -- While expiry is held off after a step of the clock, heartbeats are not judged.
    local t, held = now_ms(), tonumber(m[4] or '0')
    local holding = t < held and held - t <= tonumber(m[5])
    if not holding and redis.call('ZCOUNT', WRK, '(' .. t, '+inf') == 0 then
      return {'noworkers'}
    end
  end
  local cap = tonumber(m[2])
  if cap > 0 and redis.call('XLEN', S) - pending() + fresh > cap then return {'full'} end
  first = redis.call('HINCRBY', LED, 'accepted', fresh) - fresh
  for i = 1, n do
    if order[i] and order[i] > 0 then
      local id = first + order[i] - 1
      redis.call('XADD', S, '*', 'j', id, 'p', ARGV[1 + i])
      if keyed then redis.call('SET', KEYS[10 + i], id, 'PX', m[3]) end
    end
  end
end
local out = {'ok'}
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
return out
