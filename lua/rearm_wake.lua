-- rearm_wake: set again a wake-up marker that a process's waiter popped
-- after its last local fetcher had left, so a fetcher elsewhere still gets
-- the wake-up. Through U.ready, so the marker gets the expiry every marker
-- has (a plain ZADD of a popped, hence deleted, key would live forever). A
-- tag queue's marker set again tells the AnyTag fetchers too (W.tell).
--
-- KEYS[1]  namespace prefix
-- ARGV     wake key (a key of this namespace, as BZPOPMIN returned it)
-- Reply    1, or an error 'DXPERM INVALID ...'
local key = U.arg()
if string.sub(key, 1, #P) ~= P then
  return U.fail('INVALID', 'key ' .. key .. ' is outside the namespace')
end
local ww = K.wwake('')
local q = string.sub(key, 1, #ww) == ww and string.sub(key, #ww + 1)
if q and q ~= '*' then W.tell(q) else U.ready(key) end
return 1
