-- fetch_orchestration_item: lock the ready instance with the oldest visible
-- message among those the caller's capability filter accepts, tag its visible
-- messages, count an attempt on each, and return the batch with the current
-- execution's history and KV store, all in one step.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, lock ms, filter encoding ('*' any, '' none,
--          'min,max;min,max' inclusive ranges), filter id, sticky owner
--          ('' none: see lib_stky.lua)
-- Reply    {1, instance, token, attempts, name, version, execution id,
--           messages, history, kv, dropped, now, when to run again (ms) or nil}
--       or {0, now, when to run again (ms), dropped}
-- The token in the reply is the caller's token, ':' and the instance; ack,
-- renew and abandon take either. dropped lists instance, count pairs of
-- orphan QueueMessages deleted. A fetch that takes the last eligible
-- instance also answers when to run again, so the caller's next fetch can
-- wait without asking first.
local token, lock_ms, enc, fid, owner = U.arg(), U.num(), U.arg(), U.arg(), U.arg()
return O.fetch(token, lock_ms, enc, fid, U.now(), U.PASS_ON, owner)
