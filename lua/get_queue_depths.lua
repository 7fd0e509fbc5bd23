-- get_queue_depths: unlocked orchestrator messages and worker items visible
-- now, and orchestrator messages visible only later (timers and delayed
-- messages): a counter and an O(log n) range count for the orchestrator; for
-- the worker the size of each tag queue (few) and a counter of ready session
-- items. Locks that expired are released first (the bounded maintenance a
-- fetch would do), so their messages count as unlocked.
--
-- KEYS[1]  namespace prefix
-- ARGV     none
-- Reply    {orchestrator, worker, timer}
local now = U.now()
O.maintain(now)
W.maintain(now)
local c = redis.call('HMGET', K.stats(), 'o_unl', 'w_sready')
local later = redis.call('ZCOUNT', K.ofut(), '(' .. U.id(now), '+inf')
local ready = tonumber(c[2] or 0)
for _, q in ipairs(redis.call('SMEMBERS', K.wqueues())) do
  ready = ready + redis.call('ZCARD', K.wq(q))
end
return { tonumber(c[1] or 0) - later, ready, later }
