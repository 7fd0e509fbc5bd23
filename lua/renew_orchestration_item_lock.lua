-- renew_orchestration_item_lock: extend a valid, unexpired instance lock to
-- now + extend ms. An expired lock cannot be renewed: another dispatcher may
-- already hold the instance.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, extend ms
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, extend = U.arg(), U.num()
local now = U.now()
local inst, untl = O.lock_of(token)
if not inst or untl <= now then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired')
end
untl = now + extend
redis.call('HSET', K.om(inst), 'until', untl)
-- a renewal may also shorten the lock: the due loops learn the new expiry
U.schedule(K.ogate(), K.olocked(), untl, inst)
return 1
