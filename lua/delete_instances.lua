-- delete_instances: delete a set of instances, all or nothing. Refuses (and
-- changes nothing) when, without force, one of them is Running, or when a
-- child of one of them is not in the set (it would be orphaned: it may have
-- been started after the caller read the tree).
--
-- KEYS[1]  namespace prefix
-- ARGV     force ('0'|'1'), n, then n x instance
-- Reply    {instances, executions, events, queue messages} deleted, or an
--          error 'DXPERM ...'
local force = U.arg() == '1'
local ids, set = {}, {}
for i = 1, U.num() do
  ids[i] = U.arg()
  set[ids[i]] = true
end
for _, inst in ipairs(ids) do
  if not force and redis.call('HGET', K.inst(inst), 'ist') == 'Running' then
    return redis.error_reply('DXPERM instance ' .. inst .. ' is Running; delete it with force or wait until it ends; nothing was deleted')
  end
  for _, child in ipairs(redis.call('ZRANGE', K.ichildren(inst), 0, -1)) do
    if not set[child] then
      return redis.error_reply('DXPERM child ' .. child .. ' of instance ' .. inst ..
        ' is not in the deletion set and would be orphaned; nothing was deleted')
    end
  end
end
local now = U.now()
local total = { 0, 0, 0, 0 }
for _, inst in ipairs(ids) do
  local a, b, c, d = I.delete(inst, now)
  total[1], total[2], total[3], total[4] = total[1] + a, total[2] + b, total[3] + c, total[4] + d
end
return total
