-- pause_instance: pauses or resumes one instance (also resume_instance).
-- A paused instance is held: its messages (raised events, completions,
-- timers) keep arriving and are stored, but it is in no ready index, so no
-- fetch takes it; a turn in flight commits, and its release holds the
-- instance (O.partition reads the flag 'pz' of the record). Resuming files
-- it again by its messages, oldest first, and wakes the fetchers.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, paused ('0' or '1')
-- Reply    1 when the pause state changed, 0 when it already was so, or an
--          error 'DXPERM NOT_FOUND ...' for an instance without record
local inst, paused = U.arg(), U.arg() == '1'
local ik = K.inst(inst)
local r = redis.call('HMGET', ik, 'cur', 'pz')
if not r[1] then
  return U.fail('NOT_FOUND', 'instance ' .. inst .. ' not found')
end
if (r[2] ~= false) == paused then return 0 end
local now = U.now()
if paused then
  redis.call('HSET', ik, 'pz', U.id(now))
else
  redis.call('HDEL', ik, 'pz')
end
O.reindex(inst, now)
return 1
