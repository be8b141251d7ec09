-- Graceful or immediate shutdown. ARGV: 1 'graceful' or 'now'; now: 2 this handle's
-- drain consumer, 3 byte budget, 4 max entries, then the entries the caller received
-- from its last step and confirms.
-- Graceful: state draining, or closed at once if nothing is buffered or in flight.
-- Now: state closed. The confirmed entries are counted discarded and deleted: an item
-- counts as discarded only once the caller has it. Then the next items go out to the
-- caller: first any it was given but did not confirm (a reply lost), else undelivered
-- entries (after the group's last-delivered id), moved to its drain consumer's pending
-- list (counted in flight until confirmed), up to the budget of bytes (at least one) or
-- of entries. Reply: 'ok', then entry, job id, payload per item.
local state = live()
if not state then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', ENDS, 'stream', DEAD, 'stream'})
if bad then return bad end
if ARGV[1] == 'graceful' then
  if state ~= 'open' then return {'already', state} end
  if redis.call('XLEN', S) == 0 then
    redis.call('HSET', META, 'state', 'closed')
  else
    redis.call('HSET', META, 'state', 'draining')
  end
  wake('shutdown')
  return {'ok', state}
end
local drainer, budget, most = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if state ~= 'closed' then
  redis.call('HSET', META, 'state', 'closed')
  wake('shutdown')
end
local confirmed = {}
for i = 5, #ARGV do
  local p = redis.call('XPENDING', S, G, ARGV[i], ARGV[i], 1, drainer)[1]
  if p then confirmed[#confirmed + 1] = ARGV[i] end
end
if #confirmed > 0 then
  each_chunk('XACK', S, G, confirmed)
  each_chunk('XDEL', S, nil, confirmed)
  redis.call('HINCRBY', LED, 'discarded', #confirmed)
  wake('end')
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
  while n < most and size < budget do
    local r = redis.call('XREADGROUP', 'GROUP', G, drainer, 'COUNT', 1, 'STREAMS', S, '>')
    if not r then break end
    local e = r[1][2][1]
    if ours(e[2]) then give(e[1], e[2]) else foreign(e[1], e[2]) end
  end
end
return out
