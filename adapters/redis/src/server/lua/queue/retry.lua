-- ARGV: consumer, entry id, delivery count, repeat window ms. KEYS[8]: the entry's
-- resolution key (shared with RESOLVE: one attempt ends once, by a resolve or a retry).
-- Fenced as a resolve; refused (nothing changes) unless the queue is open and, if
-- bounded, has room for one more buffered entry. Acks and deletes the entry and appends
-- a new one with the same job id and payload: delivered again as attempt 1, counted
-- buffered again, accepted once.
local me, sid, count = ARGV[1], ARGV[2], tonumber(ARGV[3])
local tag = me .. ' ' .. ARGV[3] .. ' '
local prior = redis.call('GET', KEYS[8])
if prior then
  if string.sub(prior, 1, #tag) == tag then return {'done', string.sub(prior, #tag + 1)} end
  return {'stale'}
end
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
if not holds(sid, me, count) then
  redis.call('HINCRBY', LED, 'stale', 1)
  return {'stale'}
end
if state ~= 'open' then return {'shutdown'} end
local cap = tonumber(redis.call('HGET', META, 'cap'))
if cap > 0 and redis.call('XLEN', S) - pending() >= cap then return {'full'} end
local m = fields_of(redis.call('XRANGE', S, sid, sid)[1][2])
redis.call('XACK', S, G, sid)
redis.call('XDEL', S, sid)
redis.call('XADD', S, '*', 'j', m['j'], 'p', m['p'])
redis.call('SET', KEYS[8], tag .. 'retried', 'PX', ARGV[4])
return {'ok'}
