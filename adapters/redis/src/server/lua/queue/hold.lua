-- keep_alive and release. ARGV: consumer, entry id, delivery count, 'keep' or 'release'.
-- Both are fenced; neither counts a delivery (JUSTID).
local me, sid, count = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not redis.call('HGET', META, 'state') then return {'gone'} end
if not holds(sid, me, count) then return {'stale'} end
if ARGV[4] == 'keep' then
  redis.call('XCLAIM', S, G, me, 0, sid, 'JUSTID')
else
  -- Idle past the lease: the next reclaim takes it as the next attempt.
  local lease = tonumber(redis.call('HGET', META, 'lease_ms'))
  redis.call('XCLAIM', S, G, me, 0, sid, 'IDLE', lease + 1, 'JUSTID')
  redis.call('HDEL', META, 'reclaim_at')
end
return {'ok'}
