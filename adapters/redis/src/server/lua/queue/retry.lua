-- Puts a held job back under its id. ARGV: 1 consumer, 2 entry, 3 attempt, then entries
-- to forget. Fenced as a resolve (one attempt ends once, by a resolve or a retry); a
-- repeat after a lost reply is recognized. Refused (nothing changes) unless the queue is
-- open and, if bounded, has room for one more buffered entry. Acks and deletes the entry
-- and appends a new one with the same job id and payload: delivered again as attempt 1,
-- counted buffered again, accepted once.
local me, sid, attempt = ARGV[1], ARGV[2], tonumber(ARGV[3])
local state = live()
if not state then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', DONE, 'hash'})
if bad then return bad end
local m = redis.call('HMGET', META, 'cap', 'repeat_ms')
local function forget()
  if #ARGV > 3 then
    local ids = {}
    for i = 4, #ARGV do ids[#ids + 1] = ARGV[i] end
    each_chunk('HDEL', DONE, nil, ids)
  end
end
local pa, pw = string.match(redis.call('HGET', DONE, sid) or '', '^(%d+) (%a+)$')
if pa and tonumber(pa) == attempt then
  forget()
  return {'done', pw}
end
local p = redis.call('XPENDING', S, G, sid, sid, 1, me)[1]
if pa or not p or p[4] ~= attempt then
  redis.call('HINCRBY', LED, 'stale', 1)
  forget()
  return {'stale'}
end
if state ~= 'open' then return {'shutdown'} end
local cap = tonumber(m[1])
if cap > 0 and redis.call('XLEN', S) - pending() >= cap then return {'full'} end
local e = redis.call('XRANGE', S, sid, sid)[1]
finish(sid)
redis.call('XADD', S, '*', 'j', e[2][2], 'p', e[2][4])
redis.call('HSET', DONE, sid, attempt .. ' retried')
redis.call('PEXPIRE', DONE, m[2])
forget()
return {'ok'}
