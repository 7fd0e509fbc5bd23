-- schedule_pause: pauses or resumes a schedule. A paused schedule leaves the
-- due index; a resumed one enters it at 0, so its next firing is computed
-- from now: the times it was paused through are not caught up.
--
-- KEYS[1]  namespace prefix
-- ARGV     id, paused ('0' or '1'), note
-- Reply    1
local id, paused, note = U.arg(), U.arg(), U.arg()
local key = K.sched(id)
if redis.call('EXISTS', key) == 0 then
  return U.fail('NOT_FOUND', 'schedule ' .. id .. ' not found')
end
local was = redis.call('HGET', key, 'paused') == '1'
redis.call('HSET', key, 'paused', paused, 'note', note, 'updated', U.now())
if paused == '1' then
  redis.call('ZREM', K.scheddue(), id)
elseif was then
  -- a new rev: a firing in progress, claimed before the pause, confirms
  -- without moving next, so this reset stands
  redis.call('HINCRBY', key, 'rev', 1)
  redis.call('HDEL', key, 'next', 'fireat')
  if not redis.call('HGET', key, 'pnom') then
    redis.call('ZADD', K.scheddue(), 0, id)
  end
end
return 1
