-- schedule_take_buffered: makes a schedule's buffered firing its firing in
-- progress (pkind 'buf'), once the scheduler saw the instance it waited for
-- end. Nothing happens when another scheduler took it first, the buffered
-- firing changed, or another firing of the schedule is in progress.
--
-- KEYS[1]  namespace prefix
-- ARGV     id, nominal (the buffered firing's), lease ms
-- Reply    1 when taken, else 0
local id, nominal, lease = U.arg(), U.arg(), U.num()
local key = K.sched(id)
if redis.call('HGET', key, 'buf') ~= nominal or redis.call('HGET', key, 'pnom') then return 0 end
redis.call('HDEL', key, 'buf')
redis.call('ZREM', K.schedbuf(), id)
redis.call('HSET', key, 'pnom', nominal, 'pkind', 'buf')
redis.call('ZREM', K.scheddue(), id)
redis.call('ZADD', K.schedpend(), U.now() + lease, id)
return 1
