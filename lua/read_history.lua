-- read_history: the events of one execution, oldest first. With no
-- execution id given, the latest execution: the highest id that has a
-- record, whether or not the instance has one (history can be written
-- without it), else 1.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id ('' = latest)
-- Reply    {execution id, events, known}: known is 1 when the latest
--          execution was asked for and the instance has a record or an
--          execution, else 0
local inst, eid = U.arg(), U.arg()
local known = 0
if eid == '' then
  local latest = I.latest(inst)
  if latest or redis.call('EXISTS', K.inst(inst)) == 1 then known = 1 end
  eid = latest or '1'
end
return { eid, redis.call('LRANGE', K.history(inst, eid), 0, -1), known }
