-- renew_work_item_lock: extend a valid, unexpired worker lock to now + extend
-- ms. A cancelled item or a lost lock fails: that is how a running activity
-- learns it was cancelled.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, extend ms
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, extend = U.arg(), U.num()
local now = U.now()
local it = W.locked(token)
if not it or it.u <= now then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired (activity cancelled or lock lost)')
end
local untl = now + extend
W.relock(it.seq, untl)
if it.s then S.touch(it.s, now) end
return 1
