-- abandon_orchestration_item: release an instance lock without committing. The
-- messages of the fetched batch become visible again (after delay ms when
-- delay > 0); later arrivals are untouched. ignore undoes the attempt the
-- fetch counted. An expired lock may still be abandoned until another fetch
-- reclaims it.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, delay ms, ignore attempt ('0'|'1')
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, delay, ignore = U.arg(), U.num(), U.arg() == '1'
local now = U.now()
local inst, _, tok = O.lock_of(token)
if not inst then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid')
end
O.untag(inst, now, delay, ignore)
O.release(inst, tok, now)
return 1
