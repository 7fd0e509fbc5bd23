-- delete_instance_bulk: delete terminal root instances with all their
-- descendants, in order, until limit trees are deleted. Each tree goes
-- atomically (the whole batch is one script). A root that is no longer a
-- terminal root, that completed at or after completed_before, or whose tree
-- holds a Running instance, is skipped.
--
-- KEYS[1]  namespace prefix
-- ARGV     completed before ms ('0' = no bound), limit, n, then n x root
-- Reply    {trees deleted, roots skipped, instances, executions, events,
--           queue messages}
local before, limit = U.num(), U.num()
local roots = {}
for i = 1, U.num() do roots[i] = U.arg() end

-- eligible reports whether root is a terminal root completed in time whose
-- tree runs nothing.
local function eligible(root, ids)
  local done = redis.call('ZSCORE', K.iterminal(), root)
  if not done or (before > 0 and tonumber(done) >= before) then return false end
  for _, id in ipairs(ids) do
    if redis.call('HGET', K.inst(id), 'ist') == 'Running' then return false end
  end
  return true
end

local now = U.now()
local out = { 0, 0, 0, 0, 0, 0 }
for _, root in ipairs(roots) do
  if out[1] >= limit then break end
  local ids = I.tree(root)
  if eligible(root, ids) then
    out[1] = out[1] + 1
    for _, id in ipairs(ids) do
      local a, b, c, d = I.delete(id, now)
      out[3], out[4], out[5], out[6] = out[3] + a, out[4] + b, out[5] + c, out[6] + d
    end
  else
    out[2] = out[2] + 1
  end
end
return out
