-- ARGV: 2 lease ms, then pairs of name and holder. Renews each lease still held by its
-- holder; returns the names whose lease was lost.
if redis.call('EXISTS', SPEC) == 0 then return {'gone'} end
local lost = {'ok'}
for i = 3, #ARGV, 2 do
  local key = PREFIX .. ARGV[i]
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
