-- Shared by every latch script. KEYS: 1 spec (hash), 2 events (stream), 3 clock samples
-- (hash), 4 void holder ids (hash). ARGV: 1 the prefix of the lease keys
-- (`{latch:NAME}:lease:`, same hash tag, so the same slot), 2 this handle's id, 3 its
-- monotonic clock (ms); each script's own arguments follow from ARGV[4].
-- spec fields: version, names (given order, comma-joined), set (sorted), lease_ms,
-- policy (fail | reclaim), state (waiting | open | failed | rewound), left, created,
-- opened, run (the epoch), clock (steps seen), s:<name> (pending | claimed | reported),
-- h:<name> (holder), t:<name> (last change, ms), and the first failure: f_counter, f_kind
-- (error | abandoned | expired), f_holder, f_msg, f_panicking, f_t.
local SPEC, EV, CLK, VOID, PREFIX = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1]
local ME, MONO = ARGV[2], ARGV[3]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Whether the latch is there (not deleted, evicted or rewound); and, before a script's
-- first write, whether its keys hold what this crate writes there. Returns nil, or the
-- reply to give instead.
local function check()
  local found = redis.call('TYPE', SPEC).ok
  if found == 'none' then return {'gone'} end
  if found ~= 'hash' then return {'foreign', SPEC, 'a ' .. found} end
  if redis.call('HGET', SPEC, 'state') == 'rewound' then return {'gone'} end
  for _, pair in ipairs({{EV, 'stream'}, {CLK, 'hash'}, {VOID, 'hash'}}) do
    local t = redis.call('TYPE', pair[1]).ok
    if t ~= 'none' and t ~= pair[2] then return {'foreign', pair[1], 'a ' .. t} end
  end
  return nil
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

-- Clock samples (KEYS[3]): per handle, 'wall mono first', as the queue's (see its
-- prelude for the reasoning). A forward step (or a call delayed past the tolerance)
-- holds the sweep off for one lease (spec `hold_until`): a live holder's heartbeat sets
-- again the lease the step expired. A backward step (or the call after a delayed one)
-- brings every lease more than a lease ahead back to a lease. Both only lengthen leases.
-- A handle judges nothing in the half lease after its first look. Whether this handle
-- may judge leases now.
local function clock_ok(lease)
  local t = now_ms()
  local mono = tonumber(MONO)
  local first, ok = mono, true
  local w, m, f = string.match(redis.call('HGET', CLK, ME) or '', '^(-?%d+) (-?%d+) (-?%d+)$')
  if w then
    first = tonumber(f)
    local step = (t - tonumber(w)) - (mono - tonumber(m))
    local tolerance = math.max(math.floor(lease / 4), 250)
    if step > tolerance then
      local held = tonumber(redis.call('HGET', SPEC, 'hold_until') or '0')
      redis.call('HSET', SPEC, 'hold_until', math.max(held, t + lease))
      redis.call('HINCRBY', SPEC, 'clock', 1)
      ok = false
    elseif step < -tolerance then
      for _, name in ipairs(names()) do
        if redis.call('PTTL', PREFIX .. name) > lease then
          redis.call('PEXPIRE', PREFIX .. name, lease)
        end
      end
      redis.call('HDEL', SPEC, 'hold_until')
      redis.call('HINCRBY', SPEC, 'clock', 1)
      ok = false
    end
  end
  if mono - first < lease / 2 then ok = false end
  redis.call('HSET', CLK, ME, t .. ' ' .. mono .. ' ' .. first)
  local held = tonumber(redis.call('HGET', SPEC, 'hold_until') or '0')
  if t < held and held - t <= lease then ok = false end
  return ok
end

-- A claimed counter whose lease key is gone lost its holder (dead or stalled past its
-- lease): by policy the latch fails naming it, or the counter can be claimed again.
-- Only a handle whose look at the clock allows it judges.
local function sweep()
  if redis.call('HGET', SPEC, 'state') ~= 'waiting' then return end
  local lease = tonumber(redis.call('HGET', SPEC, 'lease_ms'))
  if not clock_ok(lease) then return end
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
