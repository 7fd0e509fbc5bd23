-- get_queue_depths: unlocked orchestrator messages and worker items visible
-- now, and orchestrator messages visible only later (timers and delayed
-- messages): a counter and an O(log n) range count for the orchestrator; for
-- the worker the size of each tag queue (few) and counters of ready session
-- items and of items ready in limit groups (lib_lim). It writes nothing, so that a read-only replica answers it: what
-- expired locks hold and delayed items now due count as waiting, as the next
-- fetch's maintenance would release them (O.expired_count, W.due_count).
--
-- KEYS[1]  namespace prefix
-- ARGV     none
-- Reply    {orchestrator, worker, timer}
-- Flags    no-writes
local now = U.now()
local c = redis.call('HMGET', K.stats(), 'o_unl', 'w_sready', 'w_lim')
local later = redis.call('ZCOUNT', K.ofut(), '(' .. U.id(now), '+inf')
local ready = tonumber(c[2] or 0) + tonumber(c[3] or 0) + W.due_count(now)
for _, q in ipairs(redis.call('SMEMBERS', K.wqueues())) do
  ready = ready + redis.call('ZCARD', K.wq(q))
end
return { tonumber(c[1] or 0) + O.expired_count(now) - later, ready, later }
