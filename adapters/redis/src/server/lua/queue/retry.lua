-- Puts a held job back under its id. KEYS: 4 the record of this call, 5.. records of
-- earlier calls to delete. ARGV: 2 consumer, 3 entry, 4 attempt, 5 the tokens of earlier
-- calls with this retry whose replies were lost (comma-separated). Fenced as a resolve
-- (one attempt ends once, by a resolve or a retry); a repeat after a lost reply is
-- recognized. Refused (nothing changes) unless the queue is open and, if bounded, has
-- room for one more buffered entry, and refused ('spent') when the policy allows no
-- further attempt (Redeliver, and this was the job's last allowed delivery). Acks and
-- deletes the entry and appends a new one with the same job id and payload and the job's
-- deliveries so far (field a): delivered again as the next attempt, counted buffered
-- again, accepted once. ARGV[6], if above 0: the ms to wait (by the server's clock)
-- before it can be delivered again: it waits among the delayed jobs instead.
local me, sid, attempt = ARGV[2], ARGV[3], tonumber(ARGV[4])
local m = redis.call('HMGET', META, 'state', 'cap', 'repeat_ms', 'max_att')
local state = m[1]
if not state or state == 'rewound' then return {'gone'} end
local function forget()
  if #KEYS > 4 then redis.call('DEL', unpack(KEYS, 5)) end
end
local prefix = TAG .. ':done:' .. me .. ':'
for lost in string.gmatch(ARGV[5], '[^,]+') do
  local rec = redis.call('GET', prefix .. lost)
  local mark = '\n' .. sid .. ' ' .. attempt .. ' '
  local found = rec and string.find(rec, mark, 1, true)
  if found then
    forget()
    return {'done', string.match(rec, '^(%a+)', found + #mark)}
  end
end
local p = redis.call('XPENDING', S, G, sid, sid, 1, me)[1]
if not p or p[4] ~= attempt then
  redis.call('HINCRBY', LED, 'stale', 1)
  forget()
  return {'stale'}
end
local e = redis.call('XRANGE', S, sid, sid)[1]
local done = earlier(e and e[2]) + attempt
local maxatt = tonumber(m[4])
if maxatt and maxatt > 0 and done >= maxatt then return {'spent'} end
if state ~= 'open' then return {'shutdown'} end
local cap = tonumber(m[2])
local waiting, bad = 0, nil
if cap > 0 then waiting, bad = later() end
if bad then return bad end
if cap > 0 and redis.call('XLEN', S) - pending() + waiting >= cap then return {'full'} end
local delay = tonumber(ARGV[6] or '0')
if delay > 0 then
  local bad = rare().check({LATER, 'zset', LATER_ITEMS, 'hash'})
  if bad then return bad end
end
redis.call('XACK', S, G, sid)
redis.call('XDEL', S, sid)
if delay > 0 then
  redis.call('ZADD', LATER, now_ms() + delay, e[2][2])
  redis.call('HSET', LATER_ITEMS, e[2][2], e[2][4], 'a:' .. e[2][2], done)
else
  append(e[2][2], e[2][4], done)
end
redis.call('SET', KEYS[4], '\n' .. sid .. ' ' .. attempt .. ' retried', 'PX', m[3])
forget()
return {'ok'}
