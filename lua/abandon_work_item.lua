-- abandon_work_item: release a worker item's lock without completing it:
-- visible again now or after delay ms; ignore undoes the attempt its fetch
-- counted.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, delay ms, ignore attempt ('0'|'1')
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, delay, ignore = U.arg(), U.num(), U.arg() == '1'
local now = U.now()
local it = W.locked(token)
if not it then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid')
end
W.unlock(it.seq, now, delay, ignore)
return 1
