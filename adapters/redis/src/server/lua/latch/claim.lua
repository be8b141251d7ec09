-- ARGV: 2 name, 3 holder. A repeat with the same holder (after a lost reply) succeeds.
if redis.call('EXISTS', SPEC) == 0 then return {'gone'} end
sweep()
local s = redis.call('HGET', SPEC, 's:' .. ARGV[2])
if not s then return {'unknown'} end
if redis.call('HGET', SPEC, 'state') == 'failed' then return failed() end
if s == 'reported' then return {'reported'} end
if s == 'claimed' then
  local holder = redis.call('HGET', SPEC, 'h:' .. ARGV[2])
  -- A repeat of this claim (its reply was lost): it holds the counter already.
  if holder == ARGV[3] then
    redis.call('PEXPIRE', PREFIX .. ARGV[2], redis.call('HGET', SPEC, 'lease_ms'))
    return {'ok'}
  end
  return {'claimed', holder}
end
local lease = redis.call('HGET', SPEC, 'lease_ms')
if not redis.call('SET', PREFIX .. ARGV[2], ARGV[3], 'NX', 'PX', lease) then
  return {'claimed', redis.call('GET', PREFIX .. ARGV[2]) or ''}
end
redis.call('HSET', SPEC, 's:' .. ARGV[2], 'claimed', 'h:' .. ARGV[2], ARGV[3], 't:' .. ARGV[2], now_ms())
event('claimed', ARGV[2], ARGV[3])
return {'ok'}
