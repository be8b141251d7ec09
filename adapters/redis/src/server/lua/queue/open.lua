-- ARGV: capacity (0 = unbounded), lease ms, max attempts (0 = Abandon, -1 = Uncertain)
local made = redis.pcall('XGROUP', 'CREATE', S, G, '0', 'MKSTREAM')
if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then
  return made
end
if redis.call('EXISTS', META) == 0 then
  redis.call('HSET', META, 'state', 'open', 'cap', ARGV[1], 'lease_ms', ARGV[2],
    'max_att', ARGV[3], 'had_workers', '0', 'version', '1')
  return {'created'}
end
if redis.call('HGET', META, 'version') ~= '1' then
  return {'mismatch', 'version', redis.call('HGET', META, 'version') or ''}
end
local names = {'cap', 'lease_ms', 'max_att'}
for i, name in ipairs(names) do
  local stored = redis.call('HGET', META, name)
  if stored ~= ARGV[i] then return {'mismatch', name, stored or ''} end
end
return {'ok', redis.call('HGET', META, 'state')}
