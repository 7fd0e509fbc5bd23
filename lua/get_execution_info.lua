-- get_execution_info: one execution record with its event count.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id
-- Reply    nil for an unknown execution, else {status, output, started,
--          completed, events}
local inst, eid = U.arg(), U.arg()
local e = redis.call('HMGET', K.exec(inst, eid), 'st', 'out', 't0', 't1')
if not e[1] then return false end
return { e[1], e[2], e[3], e[4], redis.call('LLEN', K.history(inst, eid)) }
