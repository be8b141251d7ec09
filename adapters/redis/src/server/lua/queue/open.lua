-- Creates the queue, or checks the stored settings. ARGV: 1 capacity (0 = unbounded),
-- 2 lease ms, 3 max attempts (0 = Abandon, -1 = Uncertain), 4 repeat window ms, 5 the
-- server's run id, 6 consumer, 7 the handle's monotonic clock (ms): its first look.
local names = {'cap', 'lease_ms', 'max_att', 'repeat_ms'}
if redis.call('EXISTS', META) == 0 then
  -- A stream or ledger without its meta: part of the queue is gone.
  if redis.call('EXISTS', S) == 1 or redis.call('EXISTS', LED) == 1 then return {'gone'} end
  redis.call('XGROUP', 'CREATE', S, G, '0', 'MKSTREAM')
  redis.call('HSET', META, 'state', 'open', 'cap', ARGV[1], 'lease_ms', ARGV[2],
    'max_att', ARGV[3], 'repeat_ms', ARGV[4], 'had_workers', '0', 'version', '2',
    'run', ARGV[5])
  local zero = {}
  for _, name in ipairs(COUNTERS) do
    zero[#zero + 1] = name
    zero[#zero + 1] = 0
  end
  redis.call('HSET', LED, unpack(zero))
  redis.call('HSET', CLK, ARGV[6], now_ms() .. ' ' .. ARGV[7] .. ' ' .. ARGV[7])
  return {'created'}
end
if redis.call('TYPE', META).ok ~= 'hash' then return {'foreign', META, 'a ' .. redis.call('TYPE', META).ok} end
if not live() then return {'gone'} end
if redis.call('HGET', META, 'version') ~= '2' then
  return {'mismatch', 'version', redis.call('HGET', META, 'version') or ''}
end
for i, name in ipairs(names) do
  local stored = redis.call('HGET', META, name)
  if stored ~= ARGV[i] then return {'mismatch', name, stored or ''} end
end
local bad = check({S, 'stream!', LED, 'hash!', CLK, 'hash'})
if bad then return bad end
redis.call('HSET', CLK, ARGV[6], now_ms() .. ' ' .. ARGV[7] .. ' ' .. ARGV[7])
return {'ok'}
