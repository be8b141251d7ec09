-- ARGV: 4 names (given order), 5 names (sorted), 6 lease ms, 7 policy, 8 count, 9 the
-- server's run id.
if redis.call('EXISTS', SPEC) == 0 then
  local count = tonumber(ARGV[8])
  local now = now_ms()
  redis.call('HSET', SPEC, 'version', '2', 'names', ARGV[4], 'set', ARGV[5],
    'lease_ms', ARGV[6], 'policy', ARGV[7], 'left', count, 'created', now,
    'state', count == 0 and 'open' or 'waiting', 'opened', count == 0 and now or '',
    'run', ARGV[9], 'clock', 0)
  for _, name in ipairs(names()) do
    redis.call('HSET', SPEC, 's:' .. name, 'pending', 'h:' .. name, '', 't:' .. name, now)
  end
  event('created', '', '')
  if count == 0 then event('opened', '', '') end
  redis.call('HSET', CLK, ME, now .. ' ' .. MONO .. ' ' .. MONO)
  return {'created'}
end
local bad = check()
if bad then return bad end
if redis.call('HGET', SPEC, 'version') ~= '2' then
  return {'mismatch', 'version', redis.call('HGET', SPEC, 'version') or ''}
end
if redis.call('HGET', SPEC, 'set') ~= ARGV[5] then
  return {'names', redis.call('HGET', SPEC, 'names') or ''}
end
if redis.call('HGET', SPEC, 'lease_ms') ~= ARGV[6] then
  return {'mismatch', 'lease_ms', redis.call('HGET', SPEC, 'lease_ms') or ''}
end
if redis.call('HGET', SPEC, 'policy') ~= ARGV[7] then
  return {'mismatch', 'policy', redis.call('HGET', SPEC, 'policy') or ''}
end
redis.call('HSET', CLK, ME, now_ms() .. ' ' .. MONO .. ' ' .. MONO)
return {'ok'}
