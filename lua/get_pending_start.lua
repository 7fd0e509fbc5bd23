-- get_pending_start: the pending-start note of an instance that has no
-- record (see abandon_orchestration_item_with_note).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil when it has no note or has a record, else {orchestration,
--          version, attempt, max attempts, reason, noted at}
-- Flags    no-writes
local inst = U.arg()
if redis.call('EXISTS', K.inst(inst)) == 1 then return false end
return I.pending_note(inst)
