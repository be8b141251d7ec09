-- Shared by every script. KEYS: 1 stream, 2 meta, 3 ledger, 4 workers, 5 ends, 6 dead,
-- 7 uncertain, 8 (some scripts) a per-call key. The consumer group is always 'g'.
local S, META, LED, WRK, ENDS, DEAD, UNC = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local G = 'g'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function pending()
  return redis.call('XPENDING', S, G)[1]
end

-- A wake-up for joiners and waiting puts; never the source of truth.
local function wake(kind)
  redis.call('XADD', ENDS, 'MAXLEN', '~', 256, '*', 'e', kind)
end

local function fields_of(f)
  local m = {}
  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
  return m
end

-- A durable record of an entry that needs a reader: uncertain outcomes go to UNC, every
-- other ending that kept its item (abandoned, dead letter, discarded late) to DEAD.
local function record(key, m, attempt, who, why)
  redis.call('XADD', key, '*', 'j', m['j'], 'a', attempt, 'c', who, 'why', why,
    't', now_ms(), 'p', m['p'])
  if key == DEAD then redis.call('HINCRBY', LED, 'dead', 1) end
end

-- Ends an entry of the pending list, counted under `how`.
local function finish(sid, how)
  redis.call('XACK', S, G, sid)
  redis.call('XDEL', S, sid)
  redis.call('HINCRBY', LED, how, 1)
end

-- The stored policy (meta `max_att`): 0 Abandon, -1 Uncertain, n Redeliver up to n.
local UNCERTAIN = -1

-- An entry whose lease expired was just claimed (its delivery count is now `count`).
-- Ends it by policy and returns false, or returns true: deliver it as attempt `count`.
-- Under Uncertain it ends uncertain even after shutdown_now: its effect may have happened.
local function expired(sid, m, count, state, maxatt, who)
  local held = count - 1
  if maxatt == UNCERTAIN then
    record(UNC, m, held, who, 'abandoned: lease expired, ended uncertain')
    finish(sid, 'uncertain')
  elseif state == 'closed' then
    record(DEAD, m, held, who, 'discarded: lease expired after shutdown_now')
    finish(sid, 'discarded')
  elseif maxatt == 0 then
    record(DEAD, m, held, who, 'abandoned: lease expired')
    finish(sid, 'abandoned')
  elseif count > maxatt then
    record(DEAD, m, held, who, 'dead letter: lease expired on the last of ' .. maxatt .. ' attempts')
    finish(sid, 'abandoned')
  else
    return true
  end
  wake('end')
  return false
end

-- The fence: this entry is pending, held by `me`, at delivery count `count`.
local function holds(sid, me, count)
  local p = redis.call('XPENDING', S, G, sid, sid, 1)[1]
  return p ~= nil and p[2] == me and p[4] == count
end
