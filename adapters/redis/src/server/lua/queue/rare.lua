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

  -- The redelivery backoff (meta `backoff`, stored at creation from
  -- Options::redelivery_backoff): '' for none, or its jitter ('n' none, 'f' full, 'e'
  -- equal), its seed (16 hex digits) and its ceilings in ns for attempts 1, 2, ... (the
  -- last one for every later attempt), each below 2^53. The delay is tally-queue's
  -- Backoff::delay_for(attempt, id) exactly, rounded up to whole ms as retry_backoff
  -- rounds it: the 64-bit words of its draw are four 16-bit limbs, low first, so that
  -- every sum and product stays exact in Lua's doubles.
  local W = 65536
  local function word(n)
    local w = {}
    for i = 1, 4 do
      w[i] = n % W
      n = math.floor(n / W)
    end
    return w
  end
  local function hex(s)
    return {tonumber(string.sub(s, 13, 16), 16), tonumber(string.sub(s, 9, 12), 16),
      tonumber(string.sub(s, 5, 8), 16), tonumber(string.sub(s, 1, 4), 16)}
  end
  local function xor(a, b)
    return {bit.bxor(a[1], b[1]), bit.bxor(a[2], b[2]), bit.bxor(a[3], b[3]), bit.bxor(a[4], b[4])}
  end
  -- The low `n` limbs of the product of two words (n = 4: the wrapping product; n = 8:
  -- the whole one). Each column sums at most four products below 2^32 before its carry.
  local function product(a, b, n)
    local r = {0, 0, 0, 0, 0, 0, 0, 0}
    for i = 1, 4 do
      for j = 1, 4 do
        if i + j - 1 <= n then r[i + j - 1] = r[i + j - 1] + a[i] * b[j] end
      end
    end
    local c = 0
    for i = 1, n do
      local v = r[i] + c
      r[i] = v % W
      c = math.floor(v / W)
    end
    return r
  end
  local function add(a, b)
    local r, c = {}, 0
    for i = 1, 4 do
      local v = a[i] + b[i] + c
      r[i] = v % W
      c = math.floor(v / W)
    end
    return r
  end
  local function shr(a, s)
    local q, low = math.floor(s / 16), 2 ^ (s % 16)
    local r = {}
    for i = 1, 4 do
      r[i] = math.floor((a[i + q] or 0) / low) + ((a[i + q + 1] or 0) % low) * (W / low)
    end
    return r
  end
  local K1, K2 = hex('9E3779B97F4A7C15'), hex('D1B54A32D192ED03')
  local K3, K4 = hex('BF58476D1CE4E5B9'), hex('94D049BB133111EB')
  -- Backoff's draw: SplitMix64's output function over the mix of seed, key and attempt.
  local function draw(seed, key, attempt)
    local z = xor(xor(seed, product(word(key), K1, 4)), product(word(attempt), K2, 4))
    z = add(z, K1)
    z = product(xor(z, shr(z, 30)), K3, 4)
    z = product(xor(z, shr(z, 27)), K4, 4)
    return xor(z, shr(z, 31))
  end
  -- of × d / 2^64, for `of` below 2^53: from 0 up to (not including) `of`.
  local function fraction(of, d)
    local p = product(word(of), d, 8)
    return ((p[8] * W + p[7]) * W + p[6]) * W + p[5]
  end
  -- The ms job `id` waits after its delivery number `attempt` failed (its lease expired,
  -- or it was dropped unresolved), given the stored form `spec`; nil without a backoff.
  function R.backoff_ms(spec, id, attempt)
    if spec == nil or spec == '' then return nil end
    local parts = {}
    for part in string.gmatch(spec, '%S+') do parts[#parts + 1] = part end
    attempt = math.max(attempt, 1)
    local ns = tonumber(parts[2 + math.min(attempt, #parts - 2)])
    if parts[1] == 'f' then
      ns = fraction(ns, draw(hex(parts[2]), id, attempt))
    elseif parts[1] == 'e' then
      local half = math.floor(ns / 2)
      ns = half + fraction(ns - half, draw(hex(parts[2]), id, attempt))
    end
    local ms = math.floor(ns / 1000000)
    while ms * 1000000 > ns do ms = ms - 1 end
    while (ms + 1) * 1000000 <= ns do ms = ms + 1 end
    if ms * 1000000 < ns then ms = ms + 1 end
    return ms
  end

  -- The queue's redelivery backoff, read from meta once per call.
  local spec = nil
  function R.redelay(id, attempt)
    if spec == nil then spec = redis.call('HGET', META, 'backoff') or '' end
    return R.backoff_ms(spec, id, attempt)
  end

  -- Run before a call's first write when it may redeliver: nil, or the reply to give
  -- instead when the stored backoff is not in the form this crate writes.
  function R.check_backoff()
    spec = redis.call('HGET', META, 'backoff') or ''
    if spec == '' then return nil end
    local ok = string.match(spec, '^[nfe] ' .. string.rep('%x', 16) .. ' ') ~= nil
    local count = 0
    for ns in string.gmatch(string.sub(spec, 20), '%S+') do
      local n = tonumber(ns)
      ok = ok and string.match(ns, '^%d+$') ~= nil and n < 9007199254740992
      count = count + 1
    end
    if ok and count > 0 then return nil end
    return {'foreign', META, 'a redelivery backoff not written by this crate: ' .. spec}
  end

  -- Puts the job of expired entry `sid` (our fields `f`, the job delivered `count` times
  -- in all) back among the delayed jobs, due in `delay` ms, to be delivered again as its
  -- next attempt: counted redelivered now, buffered until it is delivered.
  function R.defer(sid, f, count, delay)
    R.finish(sid)
    redis.call('ZADD', LATER, now_ms() + delay, f[2])
    redis.call('HSET', LATER_ITEMS, f[2], f[4], 'a:' .. f[2], count)
    redis.call('HINCRBY', LED, 'redelivered', 1)
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
