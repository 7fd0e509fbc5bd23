-- rearm_wake: set again a wake-up marker that a process's waiter popped
-- after its last local fetcher had left, so a fetcher elsewhere still gets
-- the wake-up. Through U.ready, so the marker gets the expiry every marker
-- has (a plain ZADD of a popped, hence deleted, key would live forever). A
-- tag queue's marker set again tells the any fetchers too, as W.ready does.
--
-- KEYS[1]  namespace prefix
-- ARGV     wake key (a key of this namespace, as BZPOPMIN returned it)
-- Reply    1, or an error 'DXPERM INVALID ...'
local key = U.arg()
if string.sub(key, 1, #P) ~= P then
  return U.fail('INVALID', 'key ' .. key .. ' is outside the namespace')
end
local ww = K.wwake('')
if U.ready(key) and string.sub(key, 1, #ww) == ww then U.ready(K.wwake('*')) end
return 1
