-- open_namespace: read the namespace's layout, recording it when new. The
-- partition count is fixed at creation: a namespace that holds data from
-- before layouts were recorded (it has a sequence) has one partition.
--
-- KEYS[1]  the namespace's own prefix ('{namespace}:')
-- ARGV     partitions to create it with (>= 1)
-- Reply    the namespace's partition count
local meta = K.meta()
local stored = redis.call('HGET', meta, 'partitions')
if stored then return tonumber(stored) end
local want = U.num()
if redis.call('EXISTS', K.seq()) == 1 then want = 1 end
redis.call('HSET', meta, 'partitions', want)
return want
