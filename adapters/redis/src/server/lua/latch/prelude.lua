-- Shared by every latch script. KEYS: 1 spec (hash), 2 events (stream). ARGV[1]: the
-- prefix of the lease keys (`{latch:NAME}:lease:`, same hash tag, so the same slot).
-- spec fields: version, names (given order, comma-joined), set (sorted), lease_ms,
-- policy (fail | reclaim), state (waiting | open | failed), left, created, opened,
-- s:<name> (pending | claimed | reported), h:<name> (holder), t:<name> (last change, ms),
-- and the first failure: f_counter, f_kind (error | abandoned | expired), f_holder,
-- f_msg, f_panicking, f_t.
local SPEC, EV, PREFIX = KEYS[1], KEYS[2], ARGV[1]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- An entry of the diagnostic stream; it is also every waiter's wake-up (never the truth).
local function event(kind, counter, holder)
  redis.call('XADD', EV, 'MAXLEN', '~', 10000, '*', 'e', kind, 'c', counter, 'h', holder,
    't', now_ms(), 'left', redis.call('HGET', SPEC, 'left'))
end

local function names()
  local out = {}
  for name in string.gmatch(redis.call('HGET', SPEC, 'names') or '', '[^,]+') do
    out[#out + 1] = name
  end
  return out
end

-- The first failure wins: only a waiting latch fails. Whether this call failed it.
local function fail(counter, kind, holder, msg, panicking)
  if redis.call('HGET', SPEC, 'state') ~= 'waiting' then return false end
  redis.call('HSET', SPEC, 'state', 'failed', 'f_counter', counter, 'f_kind', kind,
    'f_holder', holder, 'f_msg', msg, 'f_panicking', panicking, 'f_t', now_ms())
  event('failed', counter, holder)
  return true
end

-- The first failure, as a reply: {'failed', counter, kind, holder, message, panicking}.
local function failed()
  local out = {'failed'}
  for _, field in ipairs({'f_counter', 'f_kind', 'f_holder', 'f_msg', 'f_panicking'}) do
    out[#out + 1] = redis.call('HGET', SPEC, field) or ''
  end
  return out
end

-- A claimed counter whose lease key is gone lost its holder (dead or stalled past its
-- lease): by policy the latch fails naming it, or the counter can be claimed again.
local function sweep()
  if redis.call('HGET', SPEC, 'state') ~= 'waiting' then return end
  local policy = redis.call('HGET', SPEC, 'policy')
  for _, name in ipairs(names()) do
    if redis.call('HGET', SPEC, 's:' .. name) == 'claimed'
        and redis.call('EXISTS', PREFIX .. name) == 0 then
      local holder = redis.call('HGET', SPEC, 'h:' .. name) or ''
      if policy == 'reclaim' then
        redis.call('HSET', SPEC, 's:' .. name, 'pending', 'h:' .. name, '', 't:' .. name, now_ms())
        event('released', name, holder)
      else
        fail(name, 'expired', holder, '', '0')
        return
      end
    end
  end
end
