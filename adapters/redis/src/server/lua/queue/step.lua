-- One step of a consumer: resolves some of its deliveries, and hands out up to `max`
-- entries: expired leases it reclaims first (when asked to look), then new entries.
-- Either part may be empty (max 0: resolve only; no resolves: get only).
-- KEYS: 4 the wake-up stream, 5 the record of this call's resolves (for a repeat after a
-- lost reply), 6.. records of this consumer's earlier calls whose replies came back, to
-- delete. ARGV: 2 consumer, 3 get token, 4 max, 5 the handle's monotonic clock (ms), 6 '1'
-- to look for expired leases, 7 number of resolves, 8 number of extras, 9 how each resolve
-- ends, one letter each (s succeeded, r rejected, u uncertain, a abandoned, f foreign), 10
-- the attempt of every resolve ('': each resolve's attempt follows its entry), 11 and 12
-- the lowest and the highest entry resolved ('-' and '+' when unknown), 13 the fence epoch
-- every resolved entry was handed out under ('': not known), then per resolve: entry (and
-- attempt); then per extra: the resolve's number (from 1), its reason (kept in its
-- record), and the tokens of earlier calls with it whose replies were lost
-- (comma-separated).
-- Reply: status ('ok', 'empty', 'shutdown', 'void', 'gone', 'foreign'), the id to block
-- after ('empty' only), one letter per resolve ('o' counted, 's' stale, or the capital
-- initial of how an earlier call counted it), the entries handed out, reclaimed ones
-- first, flat: entry, job id ('' for an entry something else wrote: resolve it as
-- foreign), delivery count of the entry (its fence), payload, and the job's deliveries
-- before this entry (0 unless it was retried) each (flat, not as XREADGROUP nests them:
-- the server spends a fifth less handing them out of Lua), and (max above 0) the fence
-- epoch now, the one the entries handed out are under ('' if the queue has none).
-- A record (KEYS[5]) is ' id id … |' and the initials of how each was counted.
-- The fence epoch (meta `fence`) moves before any expired lease is taken (rare.lua's
-- clock_ok). While it stands, no entry handed out under it has changed holder or delivery
-- count, so a call's resolves of entries handed out under the current epoch are fenced
-- without reading the pending list row by row (the lowest entry's row is still read: it
-- checks the stream, the group and that entry); any other call (and a single resolve,
-- which reads one row either way) reads the rows of this consumer's pending list from the
-- lowest entry resolved to the highest.
-- Before the first write every key a later write needs is known good: the stream by the
-- read of this consumer's pending list, the meta by its read, the counters (when more
-- than one moves) by a read, the record lists by their type; and the first write is the
-- wake-up, whose failure is caught.
local me, token, max, mono = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local look, nres, nextra = ARGV[6] == '1', tonumber(ARGV[7]), tonumber(ARGV[8])
local ENDS, REC = KEYS[4], KEYS[5]
-- (A call that only resolves reads no more than it needs.)
local m
if max > 0 then
  m = redis.call('HMGET', META, 'state', 'lease_ms', 'max_att', 'repeat_ms', 'reclaim_at',
    'v:' .. me)
else
  m = redis.call('HMGET', META, 'state', 'lease_ms', 'max_att', 'repeat_ms')
end
local state = m[1]
if not state or state == 'rewound' then return {'gone'} end
-- A get whose reply was lost and that its handle voided: it must not hand anything out.
if max > 0 and m[6] and string.find(m[6], ' ' .. token .. '@', 1, true) then
  return {'void', ''}
end
local lease, maxatt = tonumber(m[2]), tonumber(m[3])
local t, reclaiming = 0, false
if max > 0 and look then
  t = now_ms()
  local due = tonumber(m[5] or '0')
  -- A due time more than a lease ahead was set before the clock stepped back.
  reclaiming = t >= due or due - t > lease
end
-- Appends entries to a reply, flat (see above); returns how many.
local function hand(out, sid, f, attempt)
  out[#out + 1] = sid
  if ours(f) then
    out[#out + 1] = f[2]
    out[#out + 1] = attempt
    out[#out + 1] = f[4]
    out[#out + 1] = earlier(f)
  else
    out[#out + 1] = ''
    out[#out + 1] = attempt
    out[#out + 1] = ''
    out[#out + 1] = 0
  end
end
-- Delayed jobs now due go into the stream first (only a get that runs this script
-- promotes them: one that looks for expired leases, or one whose plain read found
-- nothing).
if max > 0 and state ~= 'closed' and state ~= 'rewound' then
  local _, bad = promote(max, now_ms(), 1048576)
  if bad then return bad end
end
-- The common get: nothing to resolve, no look for expired leases.
if nres == 0 and not reclaiming and max > 0 and state == 'open' then
  local got = redis.call('XREADGROUP', 'GROUP', G, me, 'COUNT', max, 'STREAMS', S, '>')
  if got then
    if #KEYS > 5 then redis.call('DEL', unpack(KEYS, 6)) end
    local out = {}
    for _, e in ipairs(got[1][2]) do hand(out, e[1], e[2], 1) end
    return {'ok', '', '', out, redis.call('HGET', META, 'fence') or ''}
  end
end
if reclaiming then
  local r = rare()
  local bad = r.check({ENDS, 'stream', r.DEAD, 'stream', r.UNC, 'stream', r.CLK, 'hash', r.WRK, 'zset',
    LATER, 'zset', LATER_ITEMS, 'hash'}) or r.check_backoff()
  if bad then return bad end
end

-- Resolves, fenced: each counts only if this consumer holds the entry at that attempt.
local HOW = {s = 'succeeded', r = 'rejected', u = 'uncertain', a = 'abandoned', f = 'foreign'}
local codes, acks, letters, records, counts, fields = {}, {}, {}, {}, {}, 0
local function count(name)
  if not counts[name] then fields = fields + 1 end
  counts[name] = (counts[name] or 0) + 1
end
if nres > 0 then
  local hows, every, low, high = ARGV[9], ARGV[10], ARGV[11], ARGV[12]
  local per = every == '' and 2 or 1
  local extras = {}
  for k = 0, nextra - 1 do
    local at = 14 + per * nres + 3 * k
    extras[tonumber(ARGV[at])] = {ARGV[at + 1], ARGV[at + 2]}
  end
  local attempt = tonumber(every)
  -- Fenced by the epoch: the resolves were handed out under the current one, with one
  -- attempt for all and nothing to look up in records (see above).
  local by_epoch = false
  if nres > 1 and nextra == 0 and attempt and ARGV[13] ~= ''
    and ARGV[13] == redis.call('HGET', META, 'fence') then
    local p = redis.call('XPENDING', S, G, low, high, 1, me)[1]
    by_epoch = p ~= nil and p[1] == low and p[4] == attempt
  end
  if by_epoch then
    -- Each resolve holds its entry (the handle sends an entry once per call).
    acks = {unpack(ARGV, 14, 13 + nres)}
    codes = {string.rep('o', nres)}
    letters = {hows}
    local first = string.sub(hows, 1, 1)
    if not string.find(hows, '[^' .. first .. ']') then
      counts[HOW[first]] = nres
      fields = 1
    else
      for letter, how in pairs(HOW) do
        local _, n = string.gsub(hows, letter, '')
        if n > 0 then
          counts[how] = n
          fields = fields + 1
        end
      end
    end
    local i = string.find(hows, '[uaf]')
    while i do
      local letter = string.sub(hows, i, i)
      records[#records + 1] = {ARGV[13 + i], attempt, HOW[letter], ''}
      if letter == 'a' then count('dead') end
      i = string.find(hows, '[uaf]', i + 1)
    end
  else
    local held = {}
    for _, p in ipairs(redis.call('XPENDING', S, G, low, high, 1000000, me)) do
      held[p[1]] = p[4]
    end
    for i = 1, nres do
      local at = 14 + per * (i - 1)
      local sid = ARGV[at]
      if per == 2 then attempt = tonumber(ARGV[at + 1]) end
      local letter = string.sub(hows, i, i)
      local extra = extras[i]
      local earlier = nil
      if extra and extra[2] ~= '' then
        -- A repeat after lost replies: did one of those calls count it?
        for lost_token in string.gmatch(extra[2], '[^,]+') do
          local rec = redis.call('GET', TAG .. ':done:' .. me .. ':' .. lost_token)
          local found = rec and string.find(rec, ' ' .. sid .. ' ', 1, true)
          if found then
            local _, n = string.gsub(string.sub(rec, 1, found), ' ', '')
            local bar = string.find(rec, '|', 1, true)
            earlier = string.sub(rec, bar + n, bar + n)
            break
          end
        end
      end
      if earlier then
        codes[i] = string.upper(earlier)
      elseif held[sid] == attempt then
        held[sid] = nil
        codes[i] = 'o'
        acks[#acks + 1] = sid
        letters[#letters + 1] = letter
        local how = HOW[letter]
        count(how)
        if letter ~= 's' and letter ~= 'r' then
          records[#records + 1] = {sid, attempt, how, extra and extra[1] or ''}
          if letter == 'a' then count('dead') end
        end
      else
        codes[i] = 's'
        count('stale')
      end
    end
  end
end
if #records > 0 and not reclaiming then
  local r = rare()
  local bad = r.check({r.DEAD, 'stream', r.UNC, 'stream'})
  if bad then return bad end
elseif fields > 1 and not reclaiming then
  local names = rare().COUNTERS
  local values = redis.call('HMGET', LED, unpack(names))
  for i = 1, #names do
    if values[i] and not tonumber(values[i]) then
      return {'foreign', LED, 'a non-number in ' .. names[i]}
    end
  end
end
if #acks > 0 then
  -- The first write: if the wake-up stream is not a stream, nothing has changed yet.
  local woke = redis.pcall('XADD', ENDS, 'MAXLEN', '~', 256, '*', 'e', 'end')
  if type(woke) == 'table' and woke.err then
    return {'foreign', ENDS, 'a ' .. redis.call('TYPE', ENDS).ok}
  end
end
for name, n in pairs(counts) do redis.call('HINCRBY', LED, name, n) end
for _, r in ipairs(records) do
  local sid, attempt, how, why = r[1], r[2], r[3], r[4]
  local e = redis.call('XRANGE', S, sid, sid)[1]
  if how == 'foreign' then
    rare().foreign_record(sid, e and e[2])
  else
    rare().record(how == 'uncertain' and rare().UNC or rare().DEAD, e and e[2],
      earlier(e and e[2]) + attempt, me, why ~= '' and why or how)
  end
end
if #acks > 0 then
  for i = 1, #acks, 1000 do
    local last = math.min(i + 999, #acks)
    redis.call('XACK', S, G, unpack(acks, i, last))
    redis.call('XDEL', S, unpack(acks, i, last))
  end
  redis.call('SET', REC, ' ' .. table.concat(acks, ' ') .. ' |' .. table.concat(letters), 'PX', m[4])
end
if #KEYS > 5 then redis.call('DEL', unpack(KEYS, 6)) end

-- Gets: expired leases first (a look that finds nothing is not repeated by anyone for a
-- quarter of a lease), then new entries.
local out = {}
local items = 0
local function give(sid, f, attempt)
  items = items + 1
  hand(out, sid, f, attempt)
end
if reclaiming and rare().clock_ok(me, mono, lease) then
  local expired = redis.call('XPENDING', S, G, 'IDLE', lease, '-', '+', 16)
  for _, p in ipairs(expired) do
    local sid, owner, n = p[1], p[2], p[4]
    local e = redis.call('XRANGE', S, sid, sid)[1]
    local total = earlier(e and e[2]) + n
    local how, list, why = rare().fate(owner, total, state, maxatt)
    local delay = how == 'redeliver' and e and ours(e[2]) and rare().redelay(tonumber(e[2][2]), total)
    if how ~= 'redeliver' then
      rare().end_expired(sid, owner, total, how, list, why)
    elseif delay then
      -- A redelivery backoff: it waits among the delayed jobs instead.
      rare().defer(sid, e[2], total, delay)
    elseif items < max then
      local e = redis.call('XCLAIM', S, G, me, lease, sid)[1]
      if e and e[2] then
        give(sid, e[2], n + 1)
        if ours(e[2]) then redis.call('HINCRBY', LED, 'redelivered', 1) end
      end
    end
  end
  if #expired < 16 then
    redis.call('HSET', META, 'reclaim_at', t + math.max(1, math.floor(lease / 4)))
  end
end
if max > 0 and items < max and state ~= 'closed' then
  local got = redis.call('XREADGROUP', 'GROUP', G, me, 'COUNT', max - items, 'STREAMS', S, '>')
  if got then
    for _, e in ipairs(got[1][2]) do give(e[1], e[2], 1) end
  end
end

-- A graceful shutdown whose last job ended closes the queue.
if state == 'draining' and empty() then
  rare().wake('shutdown')
  redis.call('HSET', META, 'state', 'closed')
  state = 'closed'
end
local status, after = 'ok', ''
if max > 0 and items == 0 then
  if state == 'closed' then
    status = 'shutdown'
  else
    status = 'empty'
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', S)) do
      local f = rare().fields_of(g)
      if f['name'] == G then after = f['last-delivered-id'] end
    end
  end
end
if max == 0 then return {status, after, table.concat(codes), out} end
-- The epoch the entries handed out are under: the one now (a look may have moved it).
return {status, after, table.concat(codes), out, redis.call('HGET', META, 'fence') or ''}
