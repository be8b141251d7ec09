-- ARGV: 4 name, 5 holder. A repeat with the same holder (after a lost reply) succeeds; a
-- holder id its handle voided (it gave the claim up) is refused.
local bad = check()
if bad then return bad end
local name, holder = ARGV[4], ARGV[5]
if redis.call('HEXISTS', VOID, holder) == 1 then return {'void'} end
sweep()
local s = redis.call('HGET', SPEC, 's:' .. name)
if not s then return {'unknown'} end
if redis.call('HGET', SPEC, 'state') == 'failed' then return failed() end
if s == 'reported' then return {'reported'} end
if s == 'claimed' then
  local current = redis.call('HGET', SPEC, 'h:' .. name)
  -- A repeat of this claim (its reply was lost): it holds the counter already.
  if current == holder then
    redis.call('SET', PREFIX .. name, holder, 'PX', redis.call('HGET', SPEC, 'lease_ms'))
    return {'ok'}
  end
  return {'claimed', current}
end
local lease = redis.call('HGET', SPEC, 'lease_ms')
if not redis.call('SET', PREFIX .. name, holder, 'NX', 'PX', lease) then
  return {'claimed', redis.call('GET', PREFIX .. name) or ''}
end
redis.call('HSET', SPEC, 's:' .. name, 'claimed', 'h:' .. name, holder, 't:' .. name, now_ms())
event('claimed', name, holder)
return {'ok'}
