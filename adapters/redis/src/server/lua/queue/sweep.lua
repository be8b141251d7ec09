-- Ends expired deliveries that will not be delivered again (policy Abandon or Uncertain,
-- last attempt, or a closed queue); leaves the others for getters. Removes consumers that hold nothing
-- and were idle longer than ARGV[3] ms (one per process handle would pile up otherwise;
-- a live one is created again by its next read, even one blocked in XREADGROUP).
-- ARGV: consumer, max entries, idle ms.
local me = ARGV[1]
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
redis.call('ZREMRANGEBYSCORE', WRK, '-inf', now_ms())
local lease = tonumber(redis.call('HGET', META, 'lease_ms'))
local maxatt = tonumber(redis.call('HGET', META, 'max_att'))
local ended = 0
for _, p in ipairs(redis.call('XPENDING', S, G, 'IDLE', lease, '-', '+', tonumber(ARGV[2]))) do
  local sid, count = p[1], p[4]
  if state == 'closed' or maxatt <= 0 or count >= maxatt then
    local e = redis.call('XCLAIM', S, G, me, lease, sid)[1]
    if e and e[2] then
      if not expired(sid, fields_of(e[2]), count + 1, state, maxatt, me) then ended = ended + 1 end
    end
  end
end
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', S, G)) do
  local m = fields_of(c)
  if m['pending'] == 0 and m['idle'] > tonumber(ARGV[3]) and m['name'] ~= me then
    redis.call('XGROUP', 'DELCONSUMER', S, G, m['name'])
  end
end
return {'ok', ended}
