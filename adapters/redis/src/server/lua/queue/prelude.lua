-- Shared by every queue script. KEYS: 1 the stream (group 'g'), 2 meta, 3 ledger; a
-- script declares the others it uses after these. ARGV[1] is the queue's hash tag: the
-- keys of rare paths are named from it (same tag, same cluster slot). Each script's own
-- arguments follow from ARGV[2].
-- meta: state (open, draining, closed, rewound), cap, lease_ms, max_att, repeat_ms,
-- backoff (the redelivery backoff, see rare.lua; '' or absent for none), had_workers,
-- version, run (the epoch), reclaim_at, hold_until, fence (the fence epoch: see
-- step.lua), and v:<consumer>: the get tokens that consumer voided (' token@expiry' each).
local S, META, LED, TAG = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local G = 'g'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function pending()
  return redis.call('XPENDING', S, G)[1]
end

-- An entry this crate wrote has exactly the fields j (a job id) and p (the payload), and
-- after a retry a (the deliveries of the job before this entry, which count toward its
-- attempts).
local function ours(f)
  if f == nil or f[1] ~= 'j' or f[3] ~= 'p' or tonumber(f[2]) == nil then return false end
  return #f == 4 or (#f == 6 and f[5] == 'a' and string.match(f[6], '^%d+$') ~= nil)
end

-- The deliveries of an entry's job before this entry (0 for an entry without them):
-- delivery number `n` of the entry is the job's attempt `earlier(f) + n`.
local function earlier(f)
  if ours(f) and #f == 6 then return tonumber(f[6]) end
  return 0
end

-- Appends a job's entry: its id, payload, and earlier deliveries (left out when 0).
local function append(id, payload, before)
  if before and before > 0 then
    redis.call('XADD', S, '*', 'j', id, 'p', payload, 'a', before)
  else
    redis.call('XADD', S, '*', 'j', id, 'p', payload)
  end
end

-- Delayed jobs (put_after, put_at, retry_after): LATER a sorted set of job ids by due
-- time (the server's clock, ms), LATER_ITEMS a hash of their payloads (field: the id) and
-- of the earlier deliveries of retried ones (field: 'a:' and the id). Counted buffered.
-- A key of another type there is foreign: each reader finds it before its first write
-- and replies so (the functions below return nil and that reply), naming the key.
local LATER, LATER_ITEMS = TAG .. ':later', TAG .. ':later:items'
local function foreign_at(key)
  return {'foreign', key, 'a ' .. redis.call('TYPE', key).ok}
end
local function later()
  local n = redis.pcall('ZCARD', LATER)
  if type(n) == 'table' and n.err then return nil, foreign_at(LATER) end
  return n
end

-- Nothing buffered (delayed jobs included) or in flight; false while LATER is foreign.
local function empty()
  return redis.call('XLEN', S) == 0 and later() == 0
end

-- Moves up to `most` delayed jobs due by `upto` (ms; nil: any) into the stream, as new
-- entries with their ids, and no more than `budget` bytes of payloads (one job at least);
-- returns how many. Reads them all before its first write.
local function promote(most, upto, budget)
  local ids = redis.pcall('ZRANGEBYSCORE', LATER, '-inf', upto or '+inf', 'LIMIT', 0, most)
  if ids.err then return nil, foreign_at(LATER) end
  if #ids == 0 then return 0 end
  local found = redis.call('TYPE', LATER_ITEMS).ok
  if found ~= 'hash' and found ~= 'none' then return nil, foreign_at(LATER_ITEMS) end
  local size = 0
  for i, id in ipairs(ids) do
    size = size + redis.call('HSTRLEN', LATER_ITEMS, id)
    if size > budget and i > 1 then
      ids = {unpack(ids, 1, i - 1)}
      break
    end
  end
  local items = redis.call('HMGET', LATER_ITEMS, unpack(ids))
  local before = {}
  for i, id in ipairs(ids) do before[i] = 'a:' .. id end
  local counts = redis.call('HMGET', LATER_ITEMS, unpack(before))
  for i, id in ipairs(ids) do
    append(id, items[i] or '', tonumber(counts[i] or '0'))
  end
  redis.call('ZREM', LATER, unpack(ids))
  redis.call('HDEL', LATER_ITEMS, unpack(ids))
  redis.call('HDEL', LATER_ITEMS, unpack(before))
  return #ids
end
