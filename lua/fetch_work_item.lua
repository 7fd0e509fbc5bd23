-- fetch_work_item: lock the eligible worker item with the lowest seq across
-- the caller's tag queues. Without session routing only items without session
-- are eligible; with it, also the heads of the owner's sessions and of
-- claimable sessions, and taking one claims (or extends) the session.
--
-- KEYS[1]  namespace prefix
-- ARGV     token, lock ms, session routing ('0'|'1'), owner, session lock ms,
--          n queues, then n x queue ('d', 't:<tag>' or '*' for any)
-- Reply    {1, json, token, attempts, now, when to run again (ms) or nil}
--       or {0, now, when to run again (ms)}
-- A fetch that takes the last eligible item also answers when to run again,
-- so the caller's next fetch can wait without asking first.
local token, lock_ms = U.arg(), U.num()
local routed, owner, session_ms = U.arg() == '1', U.arg(), U.num()
local queues = {}
for i = 1, U.num() do queues[i] = U.arg() end
if not routed then owner = false end
local now = U.now()
W.maintain(now)
local classes = W.classes(queues, owner)
-- idle records that the caller has nothing more to take and returns when it
-- must run again.
local function idle()
  local nextdue, wake = W.nextdue(), nil
  for _, c in ipairs(classes) do wake = U.idle(c[2], nextdue, now) end
  return wake
end

local seq, sid = W.pick(classes)
if not seq then return { 0, now, idle() } end
local res = W.take(seq, sid, owner, token, lock_ms, session_ms, now)
-- one marker wakes one waiter: pass it on while more work is eligible
local more = false
for _, c in ipairs(classes) do
  if redis.call('ZCARD', c[1]) > 0 then
    U.ready(c[2])
    more = true
  end
end
res[5] = now
res[6] = false
if not more then res[6] = idle() end
return res
