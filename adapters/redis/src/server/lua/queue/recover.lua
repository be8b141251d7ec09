-- ARGV: 1 consumer, then the tokens of gets whose replies were lost. Voids each token, so
-- that a get carrying it that lands later hands nothing out; then lists this consumer's
-- pending entries (id, delivery count): one that no delivery of the handle holds was
-- handed out by a get that landed before.
local me = ARGV[1]
if not live() then return {'gone'} end
local bad = check({S, 'stream!', VOID, 'hash'})
if bad then return bad end
for i = 2, #ARGV do redis.call('HSET', VOID, me .. ':' .. ARGV[i], 1) end
redis.call('PEXPIRE', VOID, redis.call('HGET', META, 'repeat_ms'))
local out = {'ok'}
for _, p in ipairs(redis.call('XPENDING', S, G, '-', '+', 1000000, me)) do
  out[#out + 1] = p[1]
  out[#out + 1] = p[4]
end
return out
