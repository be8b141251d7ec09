-- Shared by every queue script. KEYS: 1 the stream (group 'g'), 2 meta, 3 ledger; a
-- script declares the others it uses after these. ARGV[1] is the queue's hash tag: the
-- keys of rare paths are named from it (same tag, same cluster slot). Each script's own
-- arguments follow from ARGV[2].
-- meta: state (open, draining, closed, rewound), cap, lease_ms, max_att, repeat_ms,
-- had_workers, version, run (the epoch), reclaim_at, hold_until, and v:<consumer>: the
-- get tokens that consumer voided (' token@expiry' each).
local S, META, LED, TAG = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local G = 'g'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function pending()
  return redis.call('XPENDING', S, G)[1]
end

-- An entry this crate wrote has exactly the fields j (a job id) and p (the payload).
local function ours(f)
  return f ~= nil and #f == 4 and f[1] == 'j' and f[3] == 'p' and tonumber(f[2]) ~= nil
end
