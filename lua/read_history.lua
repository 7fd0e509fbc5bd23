-- read_history: the events of one execution, oldest first. With no
-- execution id given, the latest execution: the highest id that has a
-- record, whether or not the instance has one (history can be written
-- without it), else 1.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id ('' = latest)
-- Reply    {execution id, events, 1 if the instance has a record else 0}
local inst, eid = U.arg(), U.arg()
if eid == '' then eid = I.latest(inst) or '1' end
return { eid, redis.call('LRANGE', K.history(inst, eid), 0, -1), redis.call('EXISTS', K.inst(inst)) }
