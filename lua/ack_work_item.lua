-- ack_work_item: delete a worker item held by a valid, unexpired lock and
-- enqueue its completion for the orchestrator, together. A cancelled item
-- (deleted by its orchestration) or a lost lock fails and changes nothing.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, has completion ('0'|'1'), completion instance, json
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, has, target, json = U.arg(), U.arg() == '1', U.arg(), U.arg()
local now = U.now()
local it = W.locked(token)
if not it or it.u <= now then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired (activity cancelled or lock lost)')
end
if it.s then S.touch(it.s, now) end
W.delete(it, now)
if has then O.enqueue(target, json, now, now) end
return 1
