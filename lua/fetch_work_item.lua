-- fetch_work_item: lock the eligible worker item with the lowest seq across
-- the caller's tag queues. Without session routing only items without session
-- are eligible; with it, also the heads of the owner's sessions and of
-- claimable sessions, and taking one claims (or extends) the session.
--
-- KEYS[1]  namespace prefix
-- ARGV     nonce (the client's half of the lock token), lock ms, session routing ('0'|'1'), owner, session lock ms,
--          n queues, then n x queue ('d', 't:<tag>' or '*' for any)
-- Reply    {1, json, lock token ('<seq>:<nonce>'), attempts, now, when to run again (ms) or nil}
--       or {0, now, when to run again (ms)}
-- A fetch that takes the last eligible item also answers when to run again,
-- so the caller's next fetch can wait without asking first.
local token, lock_ms, owner, session_ms, queues = W.fetch_args()
return W.fetch(token, lock_ms, owner, session_ms, queues, U.now(), U.PASS_ON)
