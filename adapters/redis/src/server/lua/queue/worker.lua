-- ARGV: 2 'add' or 'remove', 3 ttl ms, then members.
local r = rare()
local state = redis.call('HGET', META, 'state')
if not state or state == 'rewound' then return {'gone'} end
local bad = r.check({r.WRK, 'zset'})
if bad then return bad end
if ARGV[2] == 'add' then
  local expiry = now_ms() + tonumber(ARGV[3])
  for i = 4, #ARGV do redis.call('ZADD', r.WRK, expiry, ARGV[i]) end
  if #ARGV >= 4 then redis.call('HSET', META, 'had_workers', '1') end
else
  for i = 4, #ARGV do redis.call('ZREM', r.WRK, ARGV[i]) end
end
return {'ok'}
