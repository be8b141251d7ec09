-- The epoch of a queue or a latch: the run id of the server that last changed its hash
-- (KEYS[1], field `run`). ARGV: 1 the server's run id, 2 '1' if the server keeps an
-- append-only file, 3 'check' (a new connection) or 'rewound'.
-- A check finds the same run id (nothing happened), or another: the server restarted.
-- With the append-only file it restarted with every acknowledged write (the new run id
-- is stored); without it, it may have lost writes, so ids could be issued again: the
-- hash is marked rewound, and every script treats the keys as gone from then on.
-- 'rewound': a handle saw the keys go back (an id issued twice).
local h = KEYS[1]
if redis.call('EXISTS', h) == 0 then return 'absent' end
if redis.call('TYPE', h).ok ~= 'hash' then return 'gone' end
if ARGV[3] == 'rewound' then
  redis.call('HSET', h, 'state', 'rewound')
  return 'gone'
end
if redis.call('HGET', h, 'state') == 'rewound' then return 'gone' end
local run = redis.call('HGET', h, 'run')
if run == ARGV[1] then return 'ok' end
if ARGV[2] == '1' or not run then
  redis.call('HSET', h, 'run', ARGV[1])
  return 'ok'
end
redis.call('HSET', h, 'state', 'rewound')
return 'gone'
