-- Accepts a batch of items, or refuses it whole: the ids are contiguous, the ledger moves
-- once. KEYS[4..]: keyed, one idempotency key per item. ARGV: 2 '1' if keyed, then one
-- payload per item. A key already known (or repeated in the batch) gives its job's id and
-- adds nothing. Reply: 'ok' then per item its id and 1 for a keyed repeat (0: accepted
-- now); or 'shutdown', 'noworkers', 'full', 'gone'.
-- Every key is read before the first write (HINCRBY on the ledger, whose existence the
-- read of `accepted` proves), and the stream's type is checked: nothing after it fails.
local keyed = ARGV[2] == '1'
local n = #ARGV - 2
local m = redis.call('HMGET', META, 'state', 'had_workers', 'cap', 'repeat_ms', 'hold_until',
  'lease_ms')
local state = m[1]
if not state or state == 'rewound' or not redis.call('HGET', LED, 'accepted') then
  return {'gone'}
end
local found = redis.call('TYPE', S).ok
if found ~= 'stream' then
  if found == 'none' then return {'gone'} end
  return {'foreign', S, 'a ' .. found}
end
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
    order[i] = i
  end
end
if not keyed then fresh = n end
local first = 0
if fresh > 0 then
  if state ~= 'open' then return {'shutdown'} end
  if m[2] == '1' then
    -- While expiry is held off after a step of the clock, heartbeats are not judged.
    local t, held = now_ms(), tonumber(m[5] or '0')
    local holding = t < held and held - t <= tonumber(m[6])
    if not holding and redis.call('ZCOUNT', TAG .. ':workers', '(' .. t, '+inf') == 0 then
      return {'noworkers'}
    end
  end
  local cap = tonumber(m[3])
  local waiting, bad = 0, nil
  if cap > 0 then waiting, bad = later() end
  if bad then return bad end
  if cap > 0 and redis.call('XLEN', S) - pending() + waiting + fresh > cap then
    return {'full'}
  end
  first = redis.call('HINCRBY', LED, 'accepted', fresh) - fresh
  for i = 1, n do
    if order[i] and order[i] > 0 then
      local id = first + order[i] - 1
      redis.call('XADD', S, '*', 'j', id, 'p', ARGV[2 + i])
      if keyed then redis.call('SET', KEYS[3 + i], id, 'PX', m[4]) end
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
