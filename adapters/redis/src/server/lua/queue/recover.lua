-- ARGV: 2 consumer, then the tokens of gets whose replies were lost. Voids each token
-- (meta `v:<consumer>`, for the repeat window), so that a get carrying it that lands
-- later hands nothing out; then lists this consumer's pending entries (id, delivery
-- count): one that no delivery of the handle holds was handed out by a get that landed
-- before.
local me = ARGV[2]
local m = redis.call('HMGET', META, 'state', 'repeat_ms', 'v:' .. me)
if not m[1] or m[1] == 'rewound' then return {'gone'} end
if redis.call('TYPE', S).ok ~= 'stream' then return {'gone'} end
local t = now_ms()
local void = {}
for token, expiry in string.gmatch(m[3] or '', ' (%d+)@(%d+)') do
  if tonumber(expiry) > t then void[#void + 1] = ' ' .. token .. '@' .. expiry end
end
for i = 3, #ARGV do void[#void + 1] = ' ' .. ARGV[i] .. '@' .. (t + tonumber(m[2])) end
redis.call('HSET', META, 'v:' .. me, table.concat(void))
local out = {'ok'}
for _, p in ipairs(redis.call('XPENDING', S, G, '-', '+', 1000000, me)) do
  out[#out + 1] = p[1]
  out[#out + 1] = p[4]
end
return out
