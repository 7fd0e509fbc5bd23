-- read_history: the events of one execution, oldest first. With no
-- execution id given, the instance's current execution (1 when the instance
-- has no record: appended history can exist without one).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id ('' = current)
-- Reply    {execution id, events, 1 if the instance has a record else 0}
local inst, eid = U.arg(), U.arg()
local cur = redis.call('HGET', K.inst(inst), 'cur')
if eid == '' then eid = cur or '1' end
return { eid, redis.call('LRANGE', K.history(inst, eid), 0, -1), cur and 1 or 0 }
