-- ARGV: consumer, entry id, delivery count, how (succeeded, rejected, uncertain,
-- abandoned), repeat window ms, reason. KEYS[8]: the entry's resolution key.
local me, sid, count, how = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local tag = me .. ' ' .. ARGV[3] .. ' '
local prior = redis.call('GET', KEYS[8])
if prior then
  if string.sub(prior, 1, #tag) == tag then return {'done', string.sub(prior, #tag + 1)} end
  return {'stale'}
end
if not redis.call('HGET', META, 'state') then return {'gone'} end
if not holds(sid, me, count) then
  redis.call('HINCRBY', LED, 'stale', 1)
  return {'stale'}
end
if how == 'uncertain' or how == 'abandoned' then
  local m = fields_of(redis.call('XRANGE', S, sid, sid)[1][2])
  if how == 'uncertain' then
    record(UNC, m, count, me, ARGV[6])
  else
    record(DEAD, m, count, me, ARGV[6])
  end
end
finish(sid, how)
redis.call('SET', KEYS[8], tag .. how, 'PX', ARGV[5])
wake('end')
return {'ok'}
