-- prune_executions: delete old executions of a batch of instances (each one
-- atomically: the whole batch is one script). The current execution and
-- Running executions are never deleted. keep_last executions (the current one
-- included) are kept; with completed_before set, only executions completed
-- before it go. With instance_before set, only instances whose current
-- execution is Completed or Failed and ended before it are processed. The KV
-- store is untouched. An instance without a record is skipped, or with
-- must_exist refused before anything is deleted.
--
-- KEYS[1]  namespace prefix
-- ARGV     keep last (0 and 1 both keep only the current), completed before
--          ms (0 = no bound), instance before ms (0 = no bound), must exist
--          ('0'|'1'), n, then n x instance
-- Reply    {instances processed, executions, events deleted}, or an error
--          'DXPERM NOT_FOUND ...'
local keep, before, inst_before = U.num(), U.num(), U.num()
local must_exist = U.arg() == '1'
if keep < 1 then keep = 1 end
local insts = {}
for i = 1, U.num() do insts[i] = U.arg() end
if must_exist then
  for _, inst in ipairs(insts) do
    if redis.call('EXISTS', K.inst(inst)) == 0 then
      return U.fail('NOT_FOUND', 'instance ' .. inst .. ' not found')
    end
  end
end

-- selected reports whether inst exists and passes the instance filter.
local function selected(inst)
  local cur = redis.call('HGET', K.inst(inst), 'cur')
  if not cur then return false end
  if inst_before == 0 then return cur end
  local e = redis.call('HMGET', K.exec(inst, cur), 'st', 't1')
  if (e[1] == 'Completed' or e[1] == 'Failed') and e[2] and tonumber(e[2]) < inst_before then return cur end
  return false
end

local total = { 0, 0, 0 }
for _, inst in ipairs(insts) do
  local cur = selected(inst)
  if cur then
    total[1] = total[1] + 1
    for i, eid in ipairs(redis.call('ZREVRANGE', K.execs(inst), 0, -1)) do
      local e = redis.call('HMGET', K.exec(inst, eid), 'st', 't1')
      local old = i > keep and eid ~= cur and e[1] ~= 'Running'
      if old and before > 0 then old = e[2] and tonumber(e[2]) < before end
      if old then
        local x, n = I.delete_execution(inst, eid)
        total[2], total[3] = total[2] + x, total[3] + n
      end
    end
  end
end
return total
