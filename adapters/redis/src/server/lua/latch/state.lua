-- Sweeps, then returns one snapshot: state, left, created, opened, the first failure,
-- the last event id, then name, state, holder for each counter in the given order.
local bad = check()
if bad then return bad end
sweep()
local last = redis.call('XREVRANGE', EV, '+', '-', 'COUNT', 1)[1]
local out = {'ok'}
for _, field in ipairs({'state', 'left', 'created', 'opened', 'f_counter', 'f_kind',
    'f_holder', 'f_msg', 'f_panicking'}) do
  out[#out + 1] = redis.call('HGET', SPEC, field) or ''
end
out[#out + 1] = last and last[1] or '0-0'
for _, name in ipairs(names()) do
  out[#out + 1] = name
  out[#out + 1] = redis.call('HGET', SPEC, 's:' .. name)
  out[#out + 1] = redis.call('HGET', SPEC, 'h:' .. name) or ''
end
return out
