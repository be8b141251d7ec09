-- ARGV: payload, idempotency ttl ms. KEYS[8], if given: the idempotency key.
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
if KEYS[8] then
  local prior = redis.call('GET', KEYS[8])
  if prior then return {'ok', tonumber(prior), 1} end
end
if state ~= 'open' then return {'shutdown'} end
redis.call('ZREMRANGEBYSCORE', WRK, '-inf', now_ms())
if redis.call('HGET', META, 'had_workers') == '1' and redis.call('ZCARD', WRK) == 0 then
  return {'noworkers'}
end
local cap = tonumber(redis.call('HGET', META, 'cap'))
if cap > 0 and redis.call('XLEN', S) - pending() >= cap then return {'full'} end
local id = redis.call('HINCRBY', LED, 'accepted', 1) - 1
redis.call('XADD', S, '*', 'j', id, 'p', ARGV[1])
if KEYS[8] then redis.call('SET', KEYS[8], id, 'PX', ARGV[2]) end
return {'ok', id, 0}
