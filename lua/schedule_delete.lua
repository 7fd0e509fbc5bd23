-- schedule_delete: removes a schedule, its indexes and its firing records.
-- A firing in progress is confirmed into nothing (its confirm finds no
-- record); the instances it started are not touched.
--
-- KEYS[1]  namespace prefix
-- ARGV     id
-- Reply    1 when it existed, else 0
local id = U.arg()
local n = redis.call('DEL', K.sched(id), K.schedfires(id))
redis.call('ZREM', K.schedall(), id)
redis.call('ZREM', K.scheddue(), id)
redis.call('ZREM', K.schedpend(), id)
redis.call('ZREM', K.schedbuf(), id)
if n > 0 then return 1 end
return 0
