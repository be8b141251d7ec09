-- The helpers of the rare paths (expired leases, records, foreign data, the clock), made
-- on first use: a call that does not need them pays nothing for them. rare() returns
-- them; its fields: the names of the rare keys, COUNTERS, and the functions below.
local R = nil
local function rare()
  if R then return R end
  R = {}
  R.ENDS, R.DEAD, R.UNC, R.CLK, R.WRK = TAG .. ':ends', TAG .. ':dead', TAG .. ':uncertain',
    TAG .. ':clock', TAG .. ':workers'
  local ENDS, DEAD, UNC, CLK, WRK = R.ENDS, R.DEAD, R.UNC, R.CLK, R.WRK
  -- The counters of the ledger hash.
  R.COUNTERS = {'accepted', 'succeeded', 'rejected', 'uncertain', 'abandoned', 'discarded',
    'redelivered', 'stale', 'dead', 'foreign', 'clock'}
  -- The stored policy (meta `max_att`): 0 Abandon, -1 Uncertain, n Redeliver up to n.
  local UNCERTAIN = -1

  -- Run before a call's first write, so that no command after it can fail: each key it
  -- may write holds what this crate writes there (`need`: key, type pairs), and the
  -- ledger's counters are numbers. Returns nil, or the reply to give instead (foreign,
  -- with the key and what it holds).
  function R.check(need)
    for i = 1, #need, 2 do
      local found = redis.call('TYPE', need[i]).ok
      if found ~= 'none' and found ~= need[i + 1] then
        return {'foreign', need[i], 'a ' .. found}
      end
    end
    local values = redis.call('HMGET', LED, unpack(R.COUNTERS))
    for i = 1, #R.COUNTERS do
      if values[i] and not tonumber(values[i]) then
        return {'foreign', LED, 'a non-number in ' .. R.COUNTERS[i]}
      end
    end
    return nil
  end

  -- A wake-up for waits; never the source of truth.
  function R.wake(kind)
    redis.call('XADD', ENDS, 'MAXLEN', '~', 256, '*', 'e', kind)
  end

  function R.fields_of(f)
    local m = {}
    for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
    return m
  end

  R.ours = ours

  -- A durable record of an ending that needs a reader: uncertain outcomes go to UNC, every
  -- other ending that kept its item (abandoned, dead letter, discarded late) to DEAD.
  function R.record(list, f, attempt, who, why)
    local m = R.fields_of(f or {})
    redis.call('XADD', list, '*', 'j', m['j'] or '-', 'a', attempt, 'c', who, 'why', why,
      't', now_ms(), 'p', m['p'] or '')
  end

  -- The dead letter of an entry something else added to the stream: it was never
  -- accepted, so it is counted in `foreign`, not in the ledger.
  function R.foreign_record(sid, f)
    local names, text = {}, {}
    for i = 1, #(f or {}), 2 do
      names[#names + 1] = tostring(f[i])
      text[#text + 1] = tostring(f[i]) .. '=' .. tostring(f[i + 1])
    end
    redis.call('XADD', DEAD, '*', 'j', '-', 'a', 0, 'c', '', 'why',
      'foreign entry ' .. sid .. ' with fields ' .. table.concat(names, ', ') ..
      ': not written by this crate', 't', now_ms(), 'p', table.concat(text, '\n'))
  end

  -- Removes an entry of the pending list.
  function R.finish(sid)
    redis.call('XACK', S, G, sid)
    redis.call('XDEL', S, sid)
  end

  -- What becomes of an entry whose lease expired, held by `owner`, its job delivered
  -- `count` times (earlier entries' deliveries included): 'redeliver', or the counter it
  -- ends under, the list it is recorded in, and why.
  function R.fate(owner, count, state, maxatt)
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

  -- Ends an expired entry by its fate, recording it with the holder that lost it and the
  -- job's deliveries (`count`).
  function R.end_expired(sid, owner, count, how, list, why)
    local e = redis.call('XRANGE', S, sid, sid)[1]
    if e and not R.ours(e[2]) then
      R.foreign_record(sid, e[2])
      R.finish(sid)
      redis.call('HINCRBY', LED, 'foreign', 1)
      return
    end
    R.record(list, e and e[2], count, owner, why)
    R.finish(sid)
    redis.call('HINCRBY', LED, how, 1)
    if list == DEAD then redis.call('HINCRBY', LED, 'dead', 1) end
    R.wake('end')
  end

  -- Clock samples (CLK): per handle, 'wall mono first': the server's clock and the
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
  function R.clock_ok(me, mono, lease)
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
    -- Every take of an expired lease (a reclaim, an ending) follows a true answer here in
    -- its script. If some lease is past half its length, the fence epoch (meta `fence`)
    -- moves, so that resolves of entries handed out under an earlier epoch read their
    -- rows of the pending list (step.lua).
    if ok and #redis.call('XPENDING', S, G, 'IDLE', math.floor(lease / 2), '-', '+', 1) > 0 then
      redis.call('HINCRBY', META, 'fence', 1)
    end
    return ok
  end
  return R
end
