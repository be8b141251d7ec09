-- ARGV: 'graceful' or 'now', chunk size, last drained id the caller received ('' if none).
-- KEYS[8] (now): the caller's own drained list.
-- Graceful: state draining. Now: state closed; entries the caller confirmed are dropped
-- from its drained list; if that list is empty, up to a chunk of undelivered entries
-- (after the group's last-delivered id) move into it, counted discarded. Returns the
-- list's entries as drained id, job id, payload triples. A reply lost on the way leaves
-- them in the list, and the caller's next call returns them again.
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
if ARGV[1] == 'graceful' then
  if state ~= 'open' then return {'already', state} end
  redis.call('HSET', META, 'state', 'draining')
  wake('shutdown')
  return {'ok', state}
end
local mine = KEYS[8]
if state ~= 'closed' then
  redis.call('HSET', META, 'state', 'closed')
  wake('shutdown')
end
if ARGV[3] ~= '' then
  for _, e in ipairs(redis.call('XRANGE', mine, '-', ARGV[3])) do
    redis.call('XDEL', mine, e[1])
  end
end
local chunk = tonumber(ARGV[2])
if redis.call('XLEN', mine) == 0 then
  local last = '0-0'
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', S)) do
    local m = fields_of(g)
    if m['name'] == G then last = m['last-delivered-id'] end
  end
  local n = 0
  for _, e in ipairs(redis.call('XRANGE', S, '(' .. last, '+', 'COUNT', chunk)) do
    local m = fields_of(e[2])
    redis.call('XDEL', S, e[1])
    redis.call('XADD', mine, '*', 'j', m['j'], 'p', m['p'])
    n = n + 1
  end
  if n > 0 then
    redis.call('HINCRBY', LED, 'discarded', n)
    wake('end')
  end
end
local out = {'ok'}
for _, e in ipairs(redis.call('XRANGE', mine, '-', '+', 'COUNT', chunk)) do
  local m = fields_of(e[2])
  out[#out + 1] = e[1]
  out[#out + 1] = m['j']
  out[#out + 1] = m['p']
end
return out
