-- schedule_get: one schedule's record and its recent firings.
--
-- KEYS[1]  namespace prefix
-- ARGV     id, limit (firings, newest first)
-- Reply    nil when it does not exist, else {{record as HGETALL},
--          {firing, ...}}, each firing '<nominal> <outcome> <at> <instance>'
-- Flags    no-writes
local id, limit = U.arg(), U.num()
local rec = redis.call('HGETALL', K.sched(id))
if #rec == 0 then return false end
return {rec, redis.call('ZREVRANGE', K.schedfires(id), 0, limit - 1)}
