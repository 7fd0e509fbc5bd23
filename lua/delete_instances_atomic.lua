-- delete_instances_atomic: delete a set of instances, all or nothing
-- (DeleteInstancesAtomic). Refuses (and changes nothing) when, without
-- force, one of them is Running, or when a child of one of them is not in
-- the set (it would be orphaned: it may have been started after the caller
-- read the tree).
--
-- KEYS[1]  namespace prefix
-- ARGV     force ('0'|'1'), n, then n x instance
-- Reply    {instances, executions, events, queue messages} deleted, or an
--          error 'DXPERM CONFLICT ...'
local force = U.arg() == '1'
local ids = {}
for i = 1, U.num() do ids[i] = U.arg() end
local total, refused = I.delete_set(ids, force, U.now())
if not total then return refused end
return total
