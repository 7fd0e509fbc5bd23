-- enqueue_for_orchestrator: add messages for their instances, visible after
-- delay ms, in order. Never creates an instance: its first ack does. One
-- message for EnqueueForOrchestrator, many for EnqueueForOrchestratorBatch.
--
-- KEYS[1]  namespace prefix
-- ARGV     delay ms, n, then n x (instance, json)
-- Reply    1
local delay, n = U.num(), U.num()
local now = U.now()
for _ = 1, n do
  local inst, json = U.arg(), U.arg()
  O.enqueue(inst, json, now + delay, now)
end
return 1
