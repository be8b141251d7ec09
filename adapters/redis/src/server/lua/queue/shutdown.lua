-- Graceful or immediate shutdown. ARGV: 2 'graceful' or 'now'; now: 3 this handle's
-- drain consumer, 4 byte budget, 5 max entries, then the entries the caller received
-- from its last step and confirms.
-- Graceful: state draining, or closed at once if nothing is buffered or in flight.
-- Now: state closed. The confirmed entries are counted discarded and deleted: an item
-- counts as discarded only once the caller has it. Then the next items go out to the
-- caller: first any it was given but did not confirm (a reply lost), else undelivered
-- entries (after the group's last-delivered id), moved to its drain consumer's pending
-- list (counted in flight until confirmed), up to the budget of bytes (at least one) or
-- of entries. Reply: 'ok', then entry, job id, payload per item.
local r = rare()
local state = redis.call('HGET', META, 'state')
if not state or state == 'rewound' then return {'gone'} end
if redis.call('TYPE', S).ok ~= 'stream' then return {'gone'} end
local bad = r.check({r.ENDS, 'stream', r.DEAD, 'stream', LATER, 'zset', LATER_ITEMS, 'hash'})
if bad then return bad end
if ARGV[2] == 'graceful' then
  if state ~= 'open' then return {'already', state} end
  r.wake('shutdown')
  if empty() then
    redis.call('HSET', META, 'state', 'closed')
  else
    redis.call('HSET', META, 'state', 'draining')
  end
  return {'ok', state}
end
local drainer, budget, most = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
if state ~= 'closed' then
  r.wake('shutdown')
  redis.call('HSET', META, 'state', 'closed')
end
local confirmed = {}
for i = 6, #ARGV do
  local p = redis.call('XPENDING', S, G, ARGV[i], ARGV[i], 1, drainer)[1]
  if p then confirmed[#confirmed + 1] = ARGV[i] end
end
if #confirmed > 0 then
  for i = 1, #confirmed, 1000 do
    local last = math.min(i + 999, #confirmed)
    redis.call('XACK', S, G, unpack(confirmed, i, last))
    redis.call('XDEL', S, unpack(confirmed, i, last))
  end
  redis.call('HINCRBY', LED, 'discarded', #confirmed)
  r.wake('end')
end
local out, size, n = {'ok'}, 0, 0
local function give(sid, f)
  out[#out + 1] = sid
  out[#out + 1] = f[2]
  out[#out + 1] = f[4]
  size = size + #f[4]
  n = n + 1
end
for _, p in ipairs(redis.call('XPENDING', S, G, '-', '+', most, drainer)) do
  if size >= budget then break end
  local e = redis.call('XRANGE', S, p[1], p[1])[1]
  if e then give(e[1], e[2]) end
end
if n == 0 then
  -- Delayed jobs come back too, whatever their due time: into the stream, then out.
  promote(most, nil, budget)
  while n < most and size < budget do
    local r = redis.call('XREADGROUP', 'GROUP', G, drainer, 'COUNT', 1, 'STREAMS', S, '>')
    if not r then break end
    local e = r[1][2][1]
    if ours(e[2]) then
      give(e[1], e[2])
    else
      r.foreign_record(e[1], e[2])
      r.finish(e[1])
      redis.call('HINCRBY', LED, 'foreign', 1)
    end
  end
end
return out
