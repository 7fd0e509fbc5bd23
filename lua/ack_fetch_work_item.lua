-- ack_fetch_work_item: ack_work_item, then, only if the ack succeeded,
-- fetch_work_item, in one step: a worker completes an activity and takes its
-- next one in one round trip. It can also take, for an orchestration
-- dispatcher of the caller's process parked in a long poll, the instance the
-- completion made ready: it then goes to that dispatcher without a wake-up
-- marker, a blocked call or a fetch of its own.
--
-- KEYS[1]  namespace prefix
-- ARGV     fetch_work_item's ARGV, then ack_work_item's, then optionally
--          'o' and fetch_orchestration_item's ARGV (the parked
--          dispatcher's fetch)
-- Reply    fetch_work_item's reply, or with 'o' {that reply,
--          fetch_orchestration_item's reply, or nil when the ack made no
--          instance ready (U.readied: that fetch could not find one)}; or
--          ack_work_item's error (nothing fetched)
--
-- With 'o', the instance the completion makes ready is kept aside for that
-- fetch (U.keep), not filed and taken out again.
local token, lock_ms, owner, session_ms, queues = W.fetch_args()
local ack_token, has, target, json = U.arg(), U.arg() == '1', U.arg(), U.arg()
local also = U.arg()
local now = U.now()
local otoken, olock_ms, enc, fid, lazy, oowner
if also == 'o' then
  otoken, olock_ms, enc, fid, lazy, oowner = O.fetch_args()
  U.keep('o', oowner)
end
local err = W.ack(ack_token, has, target, json, now)
if err then return err end
local res = W.fetch(token, lock_ms, owner, session_ms, queues, now, U.KEEP)
if also ~= 'o' then return res end
if not U.readied('o') and not U.kept('o') then return { res, false } end
local ores = O.fetch(otoken, olock_ms, enc, fid, lazy, now, U.KEEP, oowner)
O.flush(now)
return { res, ores }
