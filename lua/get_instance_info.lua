-- get_instance_info: an instance record with the status and output of its
-- current execution.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil for an unknown instance, else {name, version, current
--          execution, created, updated, parent, status, output}
local inst = U.arg()
local r = redis.call('HMGET', K.inst(inst), 'name', 'ver', 'cur', 'created', 'updated', 'parent')
if not r[3] then return false end
local e = redis.call('HMGET', K.exec(inst, r[3]), 'st', 'out')
return { r[1], r[2], r[3], r[4], r[5], r[6], e[1] or 'Running', e[2] }
