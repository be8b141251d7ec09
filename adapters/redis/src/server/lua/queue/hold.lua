-- keep_alive and release of a held entry. ARGV: 1 consumer, 2 entry, 3 attempt, 4 'keep'
-- or 'release', 5 the handle's monotonic clock (ms). Both are fenced; neither counts a
-- delivery (JUSTID). A keep is also a look at the clock (a renewing holder is the first
-- to see a step of the server's clock).
local me, sid, attempt = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not live() then return {'gone'} end
local bad = check({S, 'stream!', LED, 'hash!', WRK, 'zset', CLK, 'hash'})
if bad then return bad end
local p = redis.call('XPENDING', S, G, sid, sid, 1, me)[1]
if not p or p[4] ~= attempt then return {'stale'} end
local lease = tonumber(redis.call('HGET', META, 'lease_ms'))
if ARGV[4] == 'keep' then
  clock_ok(me, ARGV[5], lease)
  redis.call('XCLAIM', S, G, me, 0, sid, 'JUSTID')
else
  -- Idle past the lease: the next reclaim takes it as the next attempt.
  redis.call('XCLAIM', S, G, me, 0, sid, 'IDLE', lease + 1, 'JUSTID')
  redis.call('HDEL', META, 'reclaim_at')
end
return {'ok'}
