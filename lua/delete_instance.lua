-- delete_instance: delete a root instance with all its descendants, atomically
-- (DeleteInstance). The tree is read inside the script, so a child started
-- meanwhile is deleted with it rather than orphaned. Refuses (and changes
-- nothing) an unknown instance, a sub-orchestration, and without force a
-- tree holding a Running instance.
--
-- KEYS[1]  namespace prefix
-- ARGV     force ('0'|'1'), root instance
-- Reply    {instances, executions, events, queue messages} deleted, or an
--          error 'DXPERM NOT_FOUND ...' or 'DXPERM CONFLICT ...'
local force, root = U.arg() == '1', U.arg()
local r = redis.call('HMGET', K.inst(root), 'cur', 'parent')
if not r[1] then
  return U.fail('NOT_FOUND', 'instance ' .. root .. ' not found')
end
if r[2] and r[2] ~= '' then
  return U.fail('CONFLICT', 'instance ' .. root .. ' is a sub-orchestration of ' .. r[2] ..
    ': delete the root instance instead')
end
local total, refused = I.delete_set(I.tree(root), force, U.now())
if not total then return refused end
return total
