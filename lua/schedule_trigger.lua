-- schedule_trigger: a firing now, outside the schedule's times. It is made
-- the schedule's firing in progress with a lease that is already over, so
-- the next claim of any scheduler takes it; the schedule's own times resume
-- at its confirm. A paused schedule can be triggered.
--
-- KEYS[1]  namespace prefix
-- ARGV     id
-- Reply    the firing's nominal time (now, ms)
local id = U.arg()
local key = K.sched(id)
if redis.call('EXISTS', key) == 0 then
  return U.fail('NOT_FOUND', 'schedule ' .. id .. ' not found')
end
if redis.call('HGET', key, 'pnom') then
  return U.fail('CONFLICT', 'schedule ' .. id .. ' has a firing in progress; trigger it again once it is confirmed')
end
local now = U.now()
redis.call('HSET', key, 'pnom', now, 'pkind', 'trig')
redis.call('ZREM', K.scheddue(), id)
redis.call('ZADD', K.schedpend(), now, id)
return now
