-- append_with_execution: append events to one execution outside a turn (tests
-- and tools). Event ids must follow the last stored one; nothing is written
-- otherwise.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, execution id, n, then n x (event id, json)
-- Reply    1, or an error 'DXPERM DUPLICATE ...'
local inst, eid = U.arg(), U.arg()
local ids, events = {}, {}
for i = 1, U.num() do
  ids[i], events[i] = U.arg(), U.arg()
end
local bad, known, bytes = I.check_ids(inst, eid, ids)
if bad then return bad end
local now = U.now()
I.ensure_exec(inst, eid, now, known)
I.append(inst, eid, ids, events, nil, bytes)
return 1
