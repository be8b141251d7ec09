-- ARGV: 1 'add' or 'remove', 2 ttl ms, then members.
if not live() then return {'gone'} end
local bad = check({WRK, 'zset'})
if bad then return bad end
if ARGV[1] == 'add' then
  local expiry = now_ms() + tonumber(ARGV[2])
  for i = 3, #ARGV do redis.call('ZADD', WRK, expiry, ARGV[i]) end
  if #ARGV >= 3 then redis.call('HSET', META, 'had_workers', '1') end
else
  for i = 3, #ARGV do redis.call('ZREM', WRK, ARGV[i]) end
end
return {'ok'}
