-- ARGV: 4 name, 5 holder. Fenced by the holder; a repeat (after a lost reply) is
-- recognized and not counted again.
local bad = check()
if bad then return bad end
local name, holder = ARGV[4], ARGV[5]
local s = redis.call('HGET', SPEC, 's:' .. name)
if not s then return {'unknown'} end
if redis.call('HGET', SPEC, 'h:' .. name) ~= holder then return {'stale'} end
if s == 'reported' then return {'repeat', redis.call('HGET', SPEC, 'left')} end
if redis.call('HGET', SPEC, 'state') ~= 'waiting' then return failed() end
redis.call('HSET', SPEC, 's:' .. name, 'reported', 't:' .. name, now_ms())
redis.call('DEL', PREFIX .. name)
local left = redis.call('HINCRBY', SPEC, 'left', -1)
event('reported', name, holder)
if left == 0 then
  redis.call('HSET', SPEC, 'state', 'open', 'opened', now_ms())
  event('opened', '', '')
end
return {'ok', left}
