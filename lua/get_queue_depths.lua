-- get_queue_depths: unlocked orchestrator messages and worker items visible
-- now, and orchestrator messages visible only later (timers and delayed
-- messages), from counters and two O(log n) range counts. Locks that expired
-- are released first (the bounded maintenance a fetch would do), so their
-- messages count as unlocked.
--
-- KEYS[1]  namespace prefix
-- ARGV     none
-- Reply    {orchestrator, worker, timer}
local now = U.now()
O.maintain(now)
W.maintain(now)
local c = redis.call('HMGET', K.stats(), 'o_unl', 'w_unl')
local later = redis.call('ZCOUNT', K.ofut(), '(' .. U.id(now), '+inf')
local wlater = redis.call('ZCOUNT', K.wdelay(), '(' .. U.id(now), '+inf')
return { tonumber(c[1] or 0) - later, tonumber(c[2] or 0) - wlater, later }
