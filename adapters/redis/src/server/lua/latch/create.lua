-- ARGV: 2 names (given order), 3 names (sorted), 4 lease ms, 5 policy, 6 count
if redis.call('EXISTS', SPEC) == 0 then
  local count = tonumber(ARGV[6])
  local now = now_ms()
  redis.call('HSET', SPEC, 'version', '1', 'names', ARGV[2], 'set', ARGV[3],
    'lease_ms', ARGV[4], 'policy', ARGV[5], 'left', count, 'created', now,
    'state', count == 0 and 'open' or 'waiting', 'opened', count == 0 and now or '')
  for _, name in ipairs(names()) do
    redis.call('HSET', SPEC, 's:' .. name, 'pending', 'h:' .. name, '', 't:' .. name, now)
  end
  event('created', '', '')
  if count == 0 then event('opened', '', '') end
  return {'created'}
end
if redis.call('HGET', SPEC, 'version') ~= '1' then
  return {'mismatch', 'version', redis.call('HGET', SPEC, 'version') or ''}
end
if redis.call('HGET', SPEC, 'set') ~= ARGV[3] then
  return {'names', redis.call('HGET', SPEC, 'names') or ''}
end
if redis.call('HGET', SPEC, 'lease_ms') ~= ARGV[4] then
  return {'mismatch', 'lease_ms', redis.call('HGET', SPEC, 'lease_ms') or ''}
end
if redis.call('HGET', SPEC, 'policy') ~= ARGV[5] then
  return {'mismatch', 'policy', redis.call('HGET', SPEC, 'policy') or ''}
end
return {'ok'}
