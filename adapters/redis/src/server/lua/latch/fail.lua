-- ARGV: 2 name ('' for the latch's owner), 3 holder, 4 kind, 5 message, 6 panicking
if redis.call('EXISTS', SPEC) == 0 then return {'gone'} end
local name, holder = ARGV[2], ARGV[3]
if name ~= '' then
  local s = redis.call('HGET', SPEC, 's:' .. name)
  if not s then return {'unknown'} end
  if redis.call('HGET', SPEC, 'h:' .. name) ~= holder then return {'stale'} end
  if s == 'reported' then return {'ended', 'reported'} end
  redis.call('DEL', PREFIX .. name)
end
if fail(name, ARGV[4], holder, ARGV[5], ARGV[6]) then return {'ok'} end
return {'ended', redis.call('HGET', SPEC, 'state')}
