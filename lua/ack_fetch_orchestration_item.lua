-- ack_fetch_orchestration_item: ack_orchestration_item, then, only if the
-- turn was committed, fetch_orchestration_item, in one step: an orchestration
-- dispatcher commits a turn and locks its next instance in one round trip.
--
-- KEYS[1]  namespace prefix
-- ARGV     fetch_orchestration_item's ARGV, then ack_orchestration_item's
-- Reply    fetch_orchestration_item's reply, or ack_orchestration_item's
--          error (nothing fetched)
local token, lock_ms, enc, fid, lazy, owner = O.fetch_args()
local ack_token, c = U.arg(), O.commit_args()
local now = U.now()
local err = O.commit(ack_token, c, now)
if err then return err end
return O.fetch(token, lock_ms, enc, fid, lazy, now, U.KEEP, owner)
