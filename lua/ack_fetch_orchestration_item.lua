-- ack_fetch_orchestration_item: ack_orchestration_item, then, only if the
-- turn was committed, fetch_orchestration_item, in one step: an orchestration
-- dispatcher commits a turn and locks its next instance in one round trip.
-- It can also take, for a worker of the caller's process parked in a long
-- poll, an activity the turn scheduled: the activity then goes to that
-- worker without a wake-up marker, a blocked call or a fetch of its own.
--
-- KEYS[1]  namespace prefix
-- ARGV     fetch_orchestration_item's ARGV, then ack_orchestration_item's,
--          then optionally 'w' and fetch_work_item's ARGV (the parked
--          worker's fetch)
-- Reply    fetch_orchestration_item's reply, or with 'w' {that reply,
--          fetch_work_item's reply, or nil when the turn made no activity
--          eligible (U.readied: that fetch could not find one)}; or
--          ack_orchestration_item's error (nothing fetched)
--
-- The instance the turn releases with messages left (or another the turn
-- makes ready first) is kept aside for the fetch (U.keep), not filed and
-- taken out again; with 'w', so is the first activity it schedules for the
-- worker's fetch (U.keep).
local token, lock_ms, enc, fid, lazy, owner = O.fetch_args()
local ack_token, c = U.arg(), O.commit_args()
local also = U.arg()
local now = U.now()
U.keep('o', owner)
if also == 'w' then U.keep('w') end
local err = O.commit(ack_token, c, now)
if err then return err end
local res = O.fetch(token, lock_ms, enc, fid, lazy, now, U.KEEP, owner)
O.flush(now)
if also ~= 'w' then return res end
if not U.readied('w') and not U.kept('w') then return { res, false } end
local wtoken, wlock_ms, wowner, wsession_ms, queues = W.fetch_args()
local wres = W.fetch(wtoken, wlock_ms, wowner, wsession_ms, queues, now, U.KEEP)
W.flush()
return { res, wres }
