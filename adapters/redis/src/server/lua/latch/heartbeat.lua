-- ARGV: 4 lease ms, then pairs of name and holder. A look at the clock first (a renewing
-- holder is the first to see a step of the server's clock). Then renews each lease still
-- held by its holder: one that expired but that no sweep has acted on (the counter is
-- still claimed by this holder) is set again. Returns the names whose claim was lost.
local bad = check()
if bad then return bad end
clock_ok(tonumber(ARGV[4]))
local lost = {'ok'}
for i = 5, #ARGV, 2 do
  local name, holder = ARGV[i], ARGV[i + 1]
  local key = PREFIX .. name
  if redis.call('GET', key) == holder then
    redis.call('PEXPIRE', key, ARGV[4])
  elseif redis.call('HGET', SPEC, 's:' .. name) == 'claimed'
      and redis.call('HGET', SPEC, 'h:' .. name) == holder then
    redis.call('SET', key, holder, 'PX', ARGV[4])
  else
    lost[#lost + 1] = name
  end
end
return lost
