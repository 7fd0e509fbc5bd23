-- set_priority: sets or clears one flow setting (K.flow(),
-- docs/flow-control.md): the priority of an activity or orchestration name,
-- or the aging window (also set_aging_window).
-- Filing reads them (U.flow), so what is queued keeps its place: an
-- activity keeps the priority it was enqueued with, an orchestration
-- instance takes its name's the next time it is filed ready.
--
-- KEYS[1]  namespace prefix
-- ARGV     field ('pa:<activity>', 'po:<orchestration>' or 'W'), value
--          ('' clears it)
-- Reply    1 when the setting changed, 0 when it already was so
local field, value = U.arg(), U.arg()
local k = K.flow()
if value == '' then return redis.call('HDEL', k, field) end
if redis.call('HGET', k, field) == value then return 0 end
redis.call('HSET', k, field, value)
return 1
