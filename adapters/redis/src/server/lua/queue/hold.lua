-- keep_alive and release of a held entry. ARGV: 2 consumer, 3 entry, 4 attempt, 5 'keep'
-- or 'release', 6 the handle's monotonic clock (ms). Both are fenced; neither counts a
-- delivery (JUSTID). A keep is also a look at the clock (a renewing holder is the first
-- to see a step of the server's clock).
local me, sid, attempt = ARGV[2], ARGV[3], tonumber(ARGV[4])
local m = redis.call('HMGET', META, 'state', 'lease_ms')
if not m[1] or m[1] == 'rewound' then return {'gone'} end
local p = redis.call('XPENDING', S, G, sid, sid, 1, me)[1]
if not p or p[4] ~= attempt then return {'stale'} end
local lease = tonumber(m[2])
if ARGV[5] == 'keep' then
  local r = rare()
  local bad = r.check({r.CLK, 'hash', r.WRK, 'zset'})
  if bad then return bad end
  r.clock_ok(me, ARGV[6], lease)
  redis.call('XCLAIM', S, G, me, 0, sid, 'JUSTID')
else
  -- Idle past the lease: the next reclaim takes it as the next attempt.
  redis.call('XCLAIM', S, G, me, 0, sid, 'IDLE', lease + 1, 'JUSTID')
  redis.call('HDEL', META, 'reclaim_at')
end
return {'ok'}
