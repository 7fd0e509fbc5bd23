-- schedule_upsert: creates or replaces a schedule (duroxide.ScheduleStore).
-- Its next firing time is computed again from now by the next claim (the
-- scheduler parses the spec; Lua cannot): the schedule is put in the due
-- index at 0, unless paused or a firing of it is in progress (the confirm
-- of that firing puts it back).
--
-- KEYS[1]  namespace prefix
-- ARGV     id, spec (JSON, opaque here), mode ('create': fail with EXISTS if
--          it exists; 'update': fail with NOT_FOUND if it does not; 'put':
--          either), paused ('': keep, '0', '1')
-- Reply    {created (0 or 1), rev}
local id, spec, mode, paused = U.arg(), U.arg(), U.arg(), U.arg()
local key = K.sched(id)
local exists = redis.call('EXISTS', key) == 1
if mode == 'create' and exists then
  return U.fail('EXISTS', 'schedule ' .. id .. ' already exists')
end
if mode == 'update' and not exists then
  return U.fail('NOT_FOUND', 'schedule ' .. id .. ' not found')
end
local now = U.now()
if not exists then
  redis.call('HSET', key, 'created', now)
  redis.call('ZADD', K.schedall(), now, id)
end
redis.call('HSET', key, 'spec', spec, 'updated', now)
if paused ~= '' then redis.call('HSET', key, 'paused', paused) end
local rev = redis.call('HINCRBY', key, 'rev', 1)
redis.call('HDEL', key, 'next', 'fireat')
if redis.call('HGET', key, 'paused') ~= '1' and not redis.call('HGET', key, 'pnom') then
  redis.call('ZADD', K.scheddue(), 0, id)
else
  redis.call('ZREM', K.scheddue(), id)
end
if exists then return {0, rev} end
return {1, rev}
