-- enqueue_for_orchestrator: add a message for an instance, visible after delay
-- ms. Never creates the instance: its first ack does.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, json, delay ms
-- Reply    1
local inst, json, delay = U.arg(), U.arg(), U.num()
local now = U.now()
O.enqueue(inst, json, now + delay, now)
return 1
