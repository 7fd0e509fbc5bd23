-- cleanup_orphaned_sessions: expire sessions whose lock ran out, then delete
-- up to a batch of expired sessions that have no item left.
--
-- KEYS[1]  namespace prefix
-- ARGV     batch
-- Reply    {removed, more ('0'|'1')}
local batch = U.num()
local now = U.now()
local expired = S.maintain(now, batch)
local removed = 0
for _, sid in ipairs(redis.call('SRANDMEMBER', K.sorphan(), batch)) do
  removed = removed + S.remove(sid, now)
end
local more = 0
if expired == batch or redis.call('SCARD', K.sorphan()) > 0 then more = 1 end
return { removed, more }
