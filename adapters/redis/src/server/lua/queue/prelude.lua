-- Shared by every queue script. KEYS: 1 stream (group 'g'), 2 meta, 3 ledger, 4 workers,
-- 5 ends (wake-ups), 6 dead letters, 7 uncertain records, 8 clock samples, 9 void get
-- tokens, 10 this consumer's resolved entries; a put's idempotency keys follow.
local S, META, LED, WRK, ENDS, DEAD, UNC, CLK, VOID, DONE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local G = 'g'
-- The counters of the ledger hash; `check` makes sure each is a number before a write.
local COUNTERS = {'accepted', 'succeeded', 'rejected', 'uncertain', 'abandoned', 'discarded',
  'redelivered', 'stale', 'dead', 'foreign', 'clock'}
-- The stored policy (meta `max_att`): 0 Abandon, -1 Uncertain, n Redeliver up to n.
local UNCERTAIN = -1

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The queue's state (open, draining, closed), or nil if its keys are gone or rewound.
local function live()
  local state = redis.call('HGET', META, 'state')
  if state == 'rewound' then return nil end
  return state
end

-- Run before the first write, so that no command after it can fail: each key the call
-- may write holds what this crate writes there, and the ledger's counters are numbers.
-- `need` lists key, type pairs ('stream', 'hash', 'zset', 'string'); a trailing '!' means
-- the key must exist. Returns nil, or the reply to give instead: gone, or foreign with
-- the key and what it holds.
local function check(need)
  for i = 1, #need, 2 do
    local key, want = need[i], need[i + 1]
    local must = string.sub(want, -1) == '!'
    if must then want = string.sub(want, 1, -2) end
    local found = redis.call('TYPE', key).ok
    if found == 'none' then
      if must then return {'gone'} end
    elseif found ~= want then
      return {'foreign', key, 'a ' .. found}
    end
  end
  local values = redis.call('HMGET', LED, unpack(COUNTERS))
  for i = 1, #COUNTERS do
    if values[i] and not tonumber(values[i]) then
      return {'foreign', LED, 'a non-number in ' .. COUNTERS[i]}
    end
  end
  return nil
end

local function pending()
  return redis.call('XPENDING', S, G)[1]
end

-- A wake-up for waits; never the source of truth.
local function wake(kind)
  redis.call('XADD', ENDS, 'MAXLEN', '~', 256, '*', 'e', kind)
end

local function fields_of(f)
  local m = {}
  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
  return m
end

-- An entry this crate wrote has exactly the fields j (a job id) and p (the payload).
local function ours(f)
  return f ~= nil and #f == 4 and f[1] == 'j' and f[3] == 'p' and tonumber(f[2]) ~= nil
end

-- Runs `cmd key [extra] ids...` over a list of ids, in chunks (Lua's unpack is bounded).
local function each_chunk(cmd, key, extra, ids)
  for i = 1, #ids, 1000 do
    local chunk = {}
    for k = i, math.min(i + 999, #ids) do chunk[#chunk + 1] = ids[k] end
    if extra then
      redis.call(cmd, key, extra, unpack(chunk))
    else
      redis.call(cmd, key, unpack(chunk))
    end
  end
end

-- A durable record of an ending that needs a reader: uncertain outcomes go to UNC, every
-- other ending that kept its item (abandoned, dead letter, discarded late) to DEAD.
local function record(list, f, attempt, who, why)
  local m = fields_of(f or {})
  redis.call('XADD', list, '*', 'j', m['j'] or '-', 'a', attempt, 'c', who, 'why', why,
    't', now_ms(), 'p', m['p'] or '')
end

-- Ends an entry of the pending list.
local function finish(sid)
  redis.call('XACK', S, G, sid)
  redis.call('XDEL', S, sid)
end

-- An entry something else added to the stream: it was never accepted, so it is not
-- counted in the ledger; it is removed and kept as a dead letter with its fields.
local function foreign(sid, f)
  local names, text = {}, {}
  for i = 1, #(f or {}), 2 do
    names[#names + 1] = tostring(f[i])
    text[#text + 1] = tostring(f[i]) .. '=' .. tostring(f[i + 1])
  end
  redis.call('XADD', DEAD, '*', 'j', '-', 'a', 0, 'c', '', 'why',
    'foreign entry ' .. sid .. ' with fields ' .. table.concat(names, ', ') ..
    ': not written by this crate', 't', now_ms(), 'p', table.concat(text, '\n'))
  finish(sid)
  redis.call('HINCRBY', LED, 'foreign', 1)
end

-- What becomes of an entry whose lease expired, held by `owner` and delivered `count`
-- times: 'redeliver', or the counter it ends under, the list it is recorded in, and why.
local function fate(owner, count, state, maxatt)
  if string.sub(owner, -6) == '/drain' then
    return 'discarded', DEAD, 'discarded: taken out by shutdown_now on a handle that did not confirm it'
  elseif maxatt == UNCERTAIN then
    -- Even after shutdown_now: its effect may have happened.
    return 'uncertain', UNC, 'abandoned: lease expired, ended uncertain'
  elseif state == 'closed' then
    return 'discarded', DEAD, 'discarded: lease expired after shutdown_now'
  elseif maxatt == 0 then
    return 'abandoned', DEAD, 'abandoned: lease expired'
  elseif count >= maxatt then
    return 'abandoned', DEAD, 'dead letter: lease expired on the last of ' .. maxatt .. ' attempts'
  end
  return 'redeliver'
end

-- Ends an expired entry by its fate, recording it with the holder that lost it.
local function end_expired(sid, owner, count, how, list, why)
  local e = redis.call('XRANGE', S, sid, sid)[1]
  if e and not ours(e[2]) then
    foreign(sid, e[2])
    return
  end
  record(list, e and e[2], count, owner, why)
  finish(sid)
  redis.call('HINCRBY', LED, how, 1)
  if list == DEAD then redis.call('HINCRBY', LED, 'dead', 1) end
  wake('end')
end

-- Clock samples (KEYS[8]): per handle, 'wall mono first': the server's clock and the
-- handle's monotonic clock (both ms) at its last look, and its monotonic clock at its
-- first look. The server's advance since a handle's last look is compared with the
-- handle's own. A forward step of the server's clock (or a call that waited past the
-- tolerance on its way, which looks the same) holds expiry off for one lease from now
-- (meta `hold_until`): every holder that renews has renewed by then, and a lease the step
-- inflated is judged after that. A backward step (or the call after a delayed one)
-- re-anchors the leases it inflated: an entry the server shows idle 0 (its delivery time
-- is after the server's now) counts as delivered now, and heartbeat expiries more than a
-- lease ahead come back to a lease. Both only ever lengthen a lease, so a wrong guess
-- costs at most one lease of delay, never a live holder's job. A handle judges nothing
-- in the half lease after its first look: a step before that look shows only to handles
-- that looked earlier, and they see it within that time (a renewing holder renews, and a
-- maintenance pass runs, every third of a lease). Whether handle `me`, whose monotonic
-- clock reads `mono`, may judge leases now.
local function clock_ok(me, mono, lease)
  local t = now_ms()
  mono = tonumber(mono)
  local first, ok = mono, true
  local w, m, f = string.match(redis.call('HGET', CLK, me) or '', '^(-?%d+) (-?%d+) (-?%d+)$')
  if w then
    first = tonumber(f)
    local step = (t - tonumber(w)) - (mono - tonumber(m))
    local tolerance = math.max(math.floor(lease / 4), 250)
    if step > tolerance then
      local held = tonumber(redis.call('HGET', META, 'hold_until') or '0')
      redis.call('HSET', META, 'hold_until', math.max(held, t + lease))
      redis.call('HINCRBY', LED, 'clock', 1)
      ok = false
    elseif step < -tolerance then
      for _, p in ipairs(redis.call('XPENDING', S, G, '-', '+', 1000000)) do
        if p[3] == 0 then redis.call('XCLAIM', S, G, p[2], 0, p[1], 'IDLE', 0, 'JUSTID') end
      end
      for _, member in ipairs(redis.call('ZRANGEBYSCORE', WRK, '(' .. (t + lease), '+inf')) do
        redis.call('ZADD', WRK, t + lease, member)
      end
      redis.call('HDEL', META, 'reclaim_at', 'hold_until')
      redis.call('HINCRBY', LED, 'clock', 1)
      ok = false
    end
  end
  if mono - first < lease / 2 then ok = false end
  redis.call('HSET', CLK, me, t .. ' ' .. mono .. ' ' .. first)
  -- Held off (a hold set before a backward step, more than a lease ahead, is void).
  local held = tonumber(redis.call('HGET', META, 'hold_until') or '0')
  if t < held and held - t <= lease then ok = false end
  return ok
end
