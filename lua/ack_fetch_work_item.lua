-- ack_fetch_work_item: ack_work_item, then, only if the ack succeeded,
-- fetch_work_item, in one step: a worker completes an activity and takes its
-- next one in one round trip.
--
-- KEYS[1]  namespace prefix
-- ARGV     fetch_work_item's ARGV, then ack_work_item's
-- Reply    fetch_work_item's reply, or ack_work_item's error (nothing fetched)
local token, lock_ms, owner, session_ms, queues = W.fetch_args()
local ack_token, has, target, json = U.arg(), U.arg() == '1', U.arg(), U.arg()
local now = U.now()
local err = W.ack(ack_token, has, target, json, now)
if err then return err end
return W.fetch(token, lock_ms, owner, session_ms, queues, now, U.KEEP)
