-- Creates the queue, or checks the stored settings. ARGV: 2 capacity (0 = unbounded),
-- 3 lease ms, 4 max attempts (0 = Abandon, -1 = Uncertain), 5 repeat window ms, 6 the
-- server's run id, 7 consumer, 8 the handle's monotonic clock (ms): its first look, 9 the
-- redelivery backoff's stored form ('' for none; see rare.lua). A queue created before
-- the backoff existed has none stored, which reads as ''.
local r = rare()
local names = {'cap', 'lease_ms', 'max_att', 'repeat_ms'}
local sample = now_ms() .. ' ' .. ARGV[8] .. ' ' .. ARGV[8]
if redis.call('EXISTS', META) == 0 then
  -- A stream or ledger without its meta: part of the queue is gone.
  if redis.call('EXISTS', S) == 1 or redis.call('EXISTS', LED) == 1 then return {'gone'} end
  redis.call('XGROUP', 'CREATE', S, G, '0', 'MKSTREAM')
  redis.call('HSET', META, 'state', 'open', 'cap', ARGV[2], 'lease_ms', ARGV[3],
    'max_att', ARGV[4], 'repeat_ms', ARGV[5], 'had_workers', '0', 'version', '2',
    'run', ARGV[6], 'backoff', ARGV[9], 'fence', 0)
  local zero = {}
  for _, name in ipairs(r.COUNTERS) do
    zero[#zero + 1] = name
    zero[#zero + 1] = 0
  end
  redis.call('HSET', LED, unpack(zero))
  redis.call('HSET', r.CLK, ARGV[7], sample)
  return {'created'}
end
local found = redis.call('TYPE', META).ok
if found ~= 'hash' then return {'foreign', META, 'a ' .. found} end
local state = redis.call('HGET', META, 'state')
if not state or state == 'rewound' then return {'gone'} end
if redis.call('HGET', META, 'version') ~= '2' then
  return {'mismatch', 'version', redis.call('HGET', META, 'version') or ''}
end
for i, name in ipairs(names) do
  local stored = redis.call('HGET', META, name)
  if stored ~= ARGV[i + 1] then return {'mismatch', name, stored or ''} end
end
local backoff = redis.call('HGET', META, 'backoff') or ''
if backoff ~= ARGV[9] then return {'mismatch', 'backoff', backoff} end
if redis.call('TYPE', S).ok ~= 'stream' or not redis.call('HGET', LED, 'accepted') then
  return {'gone'}
end
local bad = r.check({r.CLK, 'hash'})
if bad then return bad end
redis.call('HSET', r.CLK, ARGV[7], sample)
-- A queue made before the fence epoch existed starts one.
redis.call('HSETNX', META, 'fence', 0)
return {'ok'}
