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
local inst, failure = O.abandon(token, delay, ignore, U.now())
if not inst then return failure end
return 1
