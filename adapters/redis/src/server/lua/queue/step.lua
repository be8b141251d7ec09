-- One step of a consumer: resolves some of its deliveries, forgets resolves whose replies
-- it received, and hands out up to `max` entries: expired leases it reclaims first, then
-- new entries. Each part is optional (max 0: resolve only; no resolves: get only).
-- ARGV: 1 consumer, 2 get token, 3 max, 4 the handle's monotonic clock (ms), 5 number of
-- resolves, 6 number of forgets, then per resolve: entry, attempt, how (succeeded,
-- rejected, uncertain, abandoned), reason; then the entries to forget.
-- Reply: status ('ok', 'empty', 'shutdown', 'void', 'gone', 'foreign'), the id to block
-- after ('empty' only), one word per resolve ('ok'; 'stale'; '=how' for a repeat of one
-- that counted), then per item handed out: entry, job id, attempt, payload.
local me, token, max, mono = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local nres, nfor = tonumber(ARGV[5]), tonumber(ARGV[6])
local state = live()
if not state then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', WRK, 'zset', ENDS, 'stream', DEAD, 'stream',
  UNC, 'stream', CLK, 'hash', DONE, 'hash'})
if bad then return bad end
-- A get whose reply was lost, voided by its handle: it must not hand anything out.
if max > 0 and redis.call('HEXISTS', VOID, me .. ':' .. token) == 1 then return {'void', ''} end
local m = redis.call('HMGET', META, 'lease_ms', 'max_att', 'repeat_ms', 'reclaim_at')
local lease, maxatt = tonumber(m[1]), tonumber(m[2])
local tally = {}
local function add(name, n) tally[name] = (tally[name] or 0) + n end

-- Resolves, fenced: each counts only if this consumer holds the entry at that attempt.
local words, acks, remember, records = {}, {}, {}, {}
if nres > 0 then
  local held = {}
  local rows
  if nres == 1 then
    rows = redis.call('XPENDING', S, G, ARGV[7], ARGV[7], 1, me)
  else
    rows = redis.call('XPENDING', S, G, '-', '+', 1000000, me)
  end
  for _, p in ipairs(rows) do held[p[1]] = p[4] end
  local ids = {}
  for i = 0, nres - 1 do ids[#ids + 1] = ARGV[7 + 4 * i] end
  local prior = redis.call('HMGET', DONE, unpack(ids))
  for i = 0, nres - 1 do
    local at = 7 + 4 * i
    local sid, attempt, how, why = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2], ARGV[at + 3]
    local pa, pw = string.match(prior[i + 1] or '', '^(%d+) (%a+)$')
    if pa and tonumber(pa) == attempt then
      words[#words + 1] = '=' .. pw
    elseif not pa and held[sid] == attempt then
      held[sid] = nil
      words[#words + 1] = 'ok'
      acks[#acks + 1] = sid
      remember[#remember + 1] = sid
      remember[#remember + 1] = attempt .. ' ' .. how
      add(how, 1)
      if how == 'uncertain' or how == 'abandoned' then
        local e = redis.call('XRANGE', S, sid, sid)[1]
        records[#records + 1] = {how == 'uncertain' and UNC or DEAD, e and e[2], attempt, why}
        if how == 'abandoned' then add('dead', 1) end
      end
    else
      words[#words + 1] = 'stale'
      add('stale', 1)
    end
  end
end
for _, r in ipairs(records) do record(r[1], r[2], r[3], me, r[4]) end
if #acks > 0 then
  each_chunk('XACK', S, G, acks)
  each_chunk('XDEL', S, nil, acks)
  for i = 1, #remember, 1000 do
    redis.call('HSET', DONE, unpack(remember, i, math.min(i + 999, #remember)))
  end
  redis.call('PEXPIRE', DONE, m[3])
end
if nfor > 0 then
  local forget = {}
  for i = 7 + 4 * nres, 6 + 4 * nres + nfor do forget[#forget + 1] = ARGV[i] end
  each_chunk('HDEL', DONE, nil, forget)
end

-- Gets: expired leases first (a scan that finds nothing is not repeated for a quarter
-- of a lease), then new entries.
local out = {}
local items = 0
if max > 0 then
  local t = now_ms()
  local due = tonumber(m[4] or '0')
  -- A due time more than a lease ahead was set before the clock stepped back.
  if (t >= due or due - t > lease) and clock_ok(me, mono, lease) then
    local expired = redis.call('XPENDING', S, G, 'IDLE', lease, '-', '+', 16)
    for _, p in ipairs(expired) do
      local sid, owner, count = p[1], p[2], p[4]
      local how, list, why = fate(owner, count, state, maxatt)
      if how ~= 'redeliver' then
        end_expired(sid, owner, count, how, list, why)
      elseif items < max then
        local e = redis.call('XCLAIM', S, G, me, lease, sid)[1]
        if e and e[2] then
          if ours(e[2]) then
            items = items + 1
            out[#out + 1] = sid
            out[#out + 1] = e[2][2]
            out[#out + 1] = count + 1
            out[#out + 1] = e[2][4]
            add('redelivered', 1)
          else
            foreign(sid, e[2])
          end
        end
      end
    end
    if #expired < 16 then
      redis.call('HSET', META, 'reclaim_at', t + math.max(1, math.floor(lease / 4)))
    end
  end
  if items < max and state ~= 'closed' then
    local r = redis.call('XREADGROUP', 'GROUP', G, me, 'COUNT', max - items, 'STREAMS', S, '>')
    if r then
      for _, e in ipairs(r[1][2]) do
        if ours(e[2]) then
          items = items + 1
          out[#out + 1] = e[1]
          out[#out + 1] = e[2][2]
          out[#out + 1] = 1
          out[#out + 1] = e[2][4]
        else
          foreign(e[1], e[2])
        end
      end
    end
  end
end
for name, n in pairs(tally) do redis.call('HINCRBY', LED, name, n) end
if #acks > 0 then wake('end') end

-- A graceful shutdown whose last job ended closes the queue.
if state == 'draining' and redis.call('XLEN', S) == 0 then
  redis.call('HSET', META, 'state', 'closed')
  wake('shutdown')
  state = 'closed'
end
local status, after = 'ok', ''
if max > 0 and items == 0 then
  if state == 'closed' then
    status = 'shutdown'
  else
    status = 'empty'
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', S)) do
      local f = fields_of(g)
      if f['name'] == G then after = f['last-delivered-id'] end
    end
  end
end
local reply = {status, after}
for _, word in ipairs(words) do reply[#reply + 1] = word end
for _, v in ipairs(out) do reply[#reply + 1] = v end
return reply
