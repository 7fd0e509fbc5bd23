-- ack_work_item: delete a worker item held by a valid, unexpired lock and
-- enqueue its completion for the orchestrator, together. A cancelled item
-- (deleted by its orchestration) or a lost lock fails and changes nothing.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, has completion ('0'|'1'), completion instance, json
-- Reply    1, or an error 'DXPERM LOCK_LOST ...'
local token, has, target, json = U.arg(), U.arg() == '1', U.arg(), U.arg()
return W.ack(token, has, target, json, U.now()) or 1
