-- ARGV: 4 name ('' for the latch's owner), 5 holder, 6 kind, 7 message, 8 panicking
local bad = check()
if bad then return bad end
local name, holder = ARGV[4], ARGV[5]
if name ~= '' then
  local s = redis.call('HGET', SPEC, 's:' .. name)
  if not s then return {'unknown'} end
  if redis.call('HGET', SPEC, 'h:' .. name) ~= holder then return {'stale'} end
  if s == 'reported' then return {'ended', 'reported'} end
  redis.call('DEL', PREFIX .. name)
end
if fail(name, ARGV[6], holder, ARGV[7], ARGV[8]) then return {'ok'} end
return {'ended', redis.call('HGET', SPEC, 'state')}
