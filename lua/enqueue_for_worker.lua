-- enqueue_for_worker: add an ActivityExecute to the worker queue.
--
-- KEYS[1]  namespace prefix
-- ARGV     json, queue ('d' | 't:<tag>'), session ('' none, else '+' .. id),
--          instance, execution id, activity id
-- Reply    1
local json, q, sess, inst, e, a = U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg()
local sid = U.opt(sess)
-- only session routing needs the clock
local now = 0
if sid then now = U.now() end
W.enqueue(json, q, sid, inst, e, a, now)
return 1
