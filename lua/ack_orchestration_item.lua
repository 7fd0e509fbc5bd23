-- ack_orchestration_item: commit an orchestration turn. Everything below
-- happens or nothing does: every precondition is checked before the first
-- write (Redis never rolls a script back).
--
-- KEYS[1]  namespace prefix
-- ARGV     token, execution id,
--          status ('' unchanged), has output ('0'|'1'), output,
--          name ('' unchanged), version ('' unchanged), parent ('' none),
--          pinned version ('' unchanged),
--          custom status mode ('0' none, '1' set, '2' clear), value,
--          n events, then n x (event id, json),
--          n worker items, then n x (json, queue, session ('' none, else
--            '+' .. id), instance, execution id, activity id),
--          n orchestrator items, then n x (instance, json, visible at ms or
--            '0' for now),
--          n cancelled, then n x (instance, execution id, activity id),
--          n kv ops, then n x (op 's'|'c'|'a', key, value, updated ms)
-- Reply    1, or an error 'DXPERM LOCK_LOST ...' or 'DXPERM DUPLICATE ...'
local token, c = U.arg(), O.commit_args()
return O.commit(token, c, U.now()) or 1
