-- renew_session_lock: extend, for every owner given, each session it holds
-- that is still locked and not idle (activity within idle ms) to now + extend
-- ms.
--
-- KEYS[1]  namespace prefix
-- ARGV     extend ms, idle ms, n, then n x owner
-- Reply    number of sessions renewed
local extend, idle = U.num(), U.num()
local now = U.now()
local n = 0
for _ = 1, U.num() do
  n = n + S.renew(U.arg(), extend, idle, now)
end
return n
