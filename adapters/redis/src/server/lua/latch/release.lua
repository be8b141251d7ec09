-- ARGV: 4 name, 5 holder. A claim whose reply was lost and that its handle gave up: its
-- holder id is voided (a claim with it that lands later is refused), and if it landed
-- before, the counter is pending again.
local bad = check()
if bad then return bad end
local name, holder = ARGV[4], ARGV[5]
redis.call('HSET', VOID, holder, 1)
redis.call('PEXPIRE', VOID, math.max(600000, 100 * tonumber(redis.call('HGET', SPEC, 'lease_ms'))))
if redis.call('HGET', SPEC, 's:' .. name) == 'claimed'
    and redis.call('HGET', SPEC, 'h:' .. name) == holder then
  redis.call('DEL', PREFIX .. name)
  redis.call('HSET', SPEC, 's:' .. name, 'pending', 'h:' .. name, '', 't:' .. name, now_ms())
  event('released', name, holder)
  return {'released'}
end
return {'ok'}
