-- get_instance_info: an instance record with the status and output of its
-- current execution, and its pause state: the flag 'pz' of the record (set
-- by pause_instance) and the number of messages waiting for its next turn
-- (those of oq, the count InstancePauseState reads), so a caller that shows
-- both reads them in one step.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil for an unknown instance, else {name, version, current
--          execution, created, updated, parent, status, output, paused
--          since (nil when not paused), held}
local inst = U.arg()
local info = I.info(inst)
if not info then return false end
info[9] = redis.call('HGET', K.inst(inst), 'pz')
info[10] = redis.call('ZCARD', K.oq(inst))
return info
