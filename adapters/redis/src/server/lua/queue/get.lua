-- ARGV: consumer, reclaim budget (XAUTOCLAIM calls)
local me, budget = ARGV[1], tonumber(ARGV[2])
local state = redis.call('HGET', META, 'state')
if not state then return {'gone'} end
local lease = tonumber(redis.call('HGET', META, 'lease_ms'))
local maxatt = tonumber(redis.call('HGET', META, 'max_att'))
-- Reclaim scans the pending list; a scan that wrapped around without finding an expired
-- entry is not repeated for a quarter of a lease.
local t = now_ms()
local due = tonumber(redis.call('HGET', META, 'reclaim_at') or '0')
if t < due then budget = 0 end
local start = redis.call('HGET', META, 'cursor') or '0-0'
local cursor = start
local found = nil
for _ = 1, budget do
  local r = redis.call('XAUTOCLAIM', S, G, me, lease, cursor, 'COUNT', 1)
  cursor = r[1]
  local e = r[2][1]
  if e and e[2] then
    local sid = e[1]
    local m = fields_of(e[2])
    local count = redis.call('XPENDING', S, G, sid, sid, 1)[1][4]
    if expired(sid, m, count, state, maxatt, me) then
      redis.call('HINCRBY', LED, 'redelivered', 1)
      found = {'item', sid, m['j'], count, m['p']}
      break
    end
  end
  if cursor == '0-0' then break end
end
if cursor ~= start then redis.call('HSET', META, 'cursor', cursor) end
if budget > 0 and not found and cursor == '0-0' then
  redis.call('HSET', META, 'reclaim_at', t + math.max(1, math.floor(lease / 4)))
end
if found then return found end
if state == 'closed' then return {'shutdown'} end
local r = redis.call('XREADGROUP', 'GROUP', G, me, 'COUNT', 1, 'STREAMS', S, '>')
if r then
  local e = r[1][2][1]
  local m = fields_of(e[2])
  return {'item', e[1], m['j'], 1, m['p']}
end
if state == 'draining' and redis.call('XLEN', S) == 0 then return {'shutdown'} end
return {'empty'}
