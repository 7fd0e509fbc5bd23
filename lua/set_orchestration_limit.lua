-- set_orchestration_limit: sets, replaces or deletes the limit on running
-- instances of one orchestration name (also delete_limit of an
-- orchestration name; lib_orch, O.admit). The limit is the flow field
-- 'lo:<name>' (K.flow()): this partition's share, a concurrency. Setting it
-- files the instances it holds while slots are free (a raised limit lets
-- them run at once); deleting it forgets the slots (K.orun(name)) and files
-- every held instance without one. At most batch held instances are filed
-- per call; the caller repeats while some are held and slots are free.
--
-- KEYS[1]  namespace prefix
-- ARGV     orchestration name, concurrency ('' to delete the limit), batch
-- Reply    {1 when the name had a limit else 0, instances still held,
--          instances holding a slot}
local name, conf, batch = U.arg(), U.arg(), U.num()
local k, field = K.flow(), 'lo:' .. name
local had = redis.call('HEXISTS', k, field) == 1
local c = false
if conf == '' then
  if had then redis.call('HDEL', k, field) end
  redis.call('DEL', K.orun(name))
else
  c = tonumber(conf)
  redis.call('HSET', k, field, conf)
end
local held = O.admit_held(name, c, U.now(), batch)
return { had and 1 or 0, held, redis.call('SCARD', K.orun(name)) }
