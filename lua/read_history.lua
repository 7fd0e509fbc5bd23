-- read_history: the events of one execution, oldest first. With no
-- execution id given, the instance's current execution (1 when the instance
-- has no record).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id ('' = current)
-- Reply    {execution id, events}
local inst, eid = U.arg(), U.arg()
if eid == '' then eid = redis.call('HGET', K.inst(inst), 'cur') or '1' end
return { eid, redis.call('LRANGE', K.history(inst, eid), 0, -1) }
