-- pause_orchestration_name: pauses or resumes an orchestration name (also
-- resume_orchestration_name).
-- Pausing sets the flow field 'z:<name>' (K.flow(), since ms): an instance
-- of the name is held (state 'z', listed in K.nheld(name)) when it is next
-- filed ready (make_ready, which reads the flag with its record) or, filed
-- before the pause, when a fetch picks it (O.take); its messages keep
-- arriving and its timers keep firing. Resuming clears the flag and files
-- up to batch held instances again by their messages (O.reindex: one that
-- is paused itself stays held); the caller repeats while some are left.
--
-- KEYS[1]  namespace prefix
-- ARGV     orchestration name, paused ('0' or '1'), batch
-- Reply    {1 when the pause state changed else 0, instances held by the
--          name (after this call's filing)}
local name, paused, batch = U.arg(), U.arg() == '1', U.num()
local k, field, hk = K.flow(), 'z:' .. name, K.nheld(name)
local was = redis.call('HEXISTS', k, field) == 1
if paused then
  if not was then redis.call('HSET', k, field, U.id(U.now())) end
  return { was and 0 or 1, redis.call('ZCARD', hk) }
end
if was then redis.call('HDEL', k, field) end
local now = U.now()
for _, inst in ipairs(redis.call('ZRANGE', hk, 0, batch - 1)) do
  redis.call('ZREM', hk, inst)
  O.reindex(inst, now)
end
return { was and 1 or 0, redis.call('ZCARD', hk) }
