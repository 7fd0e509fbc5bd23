-- get_pending_start: the pending-start note of an instance that has no
-- record (see abandon_orchestration_item_with_note), or, without one, a
-- note saying that its orchestration name's limit on running instances
-- holds it (O.admit; attempt 0).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil when it has no note or has a record, else {orchestration,
--          version, attempt, max attempts, reason, noted at}
-- Flags    no-writes
local inst = U.arg()
if redis.call('EXISTS', K.inst(inst)) == 1 then return false end
local note = I.pending_note(inst)
if note then return note end
local name, at = O.held_by(inst)
if not name then return false end
return { name, '', '0', '0', 'is held by its limit on running instances until one of them ends', at }
