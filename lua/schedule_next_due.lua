-- schedule_next_due: what a scheduler sleeps until: the earliest due
-- schedule and the earliest lease of a firing in progress, and how many
-- schedules hold a buffered firing (which it looks at again each refresh).
--
-- KEYS[1]  namespace prefix
-- ARGV     (none)
-- Reply    {now, earliest due (-1: none), earliest lease end (-1: none),
--          buffered count}
-- Flags    no-writes
local function first(key)
  local z = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #z == 0 then return -1 end
  return tonumber(z[2])
end
return {U.now(), first(K.scheddue()), first(K.schedpend()), redis.call('ZCARD', K.schedbuf())}
