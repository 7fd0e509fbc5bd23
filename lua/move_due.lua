-- move_due: a due loop's run (see U.due in lib_util.lua). Applies what
-- time has made due in both queues (expired locks and sessions, delayed
-- instances and items, ended sticky offers), which sets the markers of the
-- fetchers that can take it, and plans the loop's next run; or, when the
-- loop closes, gives up the time it claimed.
--
-- KEYS[1]  namespace prefix
-- ARGV     the loop's id, '1' when it closes
-- Reply    {server time ms, when the loop runs next ms}: at once again
--          when that is not after the server time (more was due than one
--          run applies); {} when it closes
local id, closing = U.arg(), U.arg() == '1'
if closing then
  U.unplan(id)
  return {}
end
local now = U.now()
O.maintain(now)
W.maintain(now)
return { now, U.plan(id, now, { K.ogate(), K.wgate() }) }
