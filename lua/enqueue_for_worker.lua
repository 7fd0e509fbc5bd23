-- enqueue_for_worker: add ActivityExecutes to the worker queue, in order.
-- One item for EnqueueForWorker, many for EnqueueForWorkerBatch.
--
-- KEYS[1]  namespace prefix
-- ARGV     n, then n x (json, queue ('d' | 't:<tag>'), session ('' none,
--          else '+' .. id), instance, execution id, activity id, activity
--          name)
-- Reply    1
local now = false
for _ = 1, U.num() do
  local json, q, sess, inst, e, a, name = U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg()
  local sid = U.opt(sess)
  -- only session routing needs the clock
  if sid and not now then now = U.now() end
  W.enqueue(json, q, sid, inst, e, a, now or 0, name)
end
return 1
