-- get_instance_activities: what the worker queue holds of an instance's
-- activities that were scheduled and not yet acked or cancelled (wact), and
-- what the orchestrator queue knows of the runtime running its turns, for
-- people to read: nothing here is needed to run. Each item says its state,
-- the fetches it has had (its attempt), when its lock expires and, for a
-- session item, the session and the owner holding it. A plain item's lock
-- names no worker: fetchers lock items with a nonce of their own.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, limit (most items read)
-- Reply    {now, items of the instance, turn locked until ('' unless a
--          turn holds the instance), sticky owner ('' none or expired),
--          {execution, activity, state ('r' ready, 'd' delayed, 'l'
--          locked), attempts, locked until ('' unless locked), tag queue,
--          session ('' none), session owner ('' none or lock expired), ...}}
-- Flags    no-writes
local inst, limit = U.arg(), U.num()
local now = U.now()
local om = redis.call('HMGET', K.om(inst), 'tok', 'until', 'sk')
local turn = ''
if om[1] and tonumber(om[2] or 0) > now then turn = om[2] end
local sticky = ''
if om[3] then
  local untl, owner = string.match(om[3], '^(%d+):%d+:(.*)$')
  if untl and tonumber(untl) > now then sticky = owner end
end
local out = {}
for _, m in ipairs(redis.call('ZRANGE', K.wact(inst), 0, limit - 1)) do
  local e, a, seq = string.match(m, '^(%d+):(%d+):(%d+)$')
  local it = redis.call('HMGET', K.witem(seq), 'st', 'n', 'u', 'q', 's')
  if it[1] then
    local owner = ''
    if it[5] then owner = S.owner(it[5], now) or '' end
    local untl = ''
    if it[1] == 'l' then untl = it[3] or '' end
    for _, v in ipairs({ e, a, it[1], it[2] or '0', untl, it[4] or 'd', it[5] or '', owner }) do
      out[#out + 1] = v
    end
  end
end
return { U.id(now), redis.call('ZCARD', K.wact(inst)), turn, sticky, out }
