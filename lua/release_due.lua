-- release_due: give back a due time a process claimed (U.claim) but will
-- not fetch at: when the time came, no fetcher of the queue was left in it
-- to run; or the process is closing. The claim is dropped and the standby
-- of the queue is woken, whose fetch then applies what is due and claims the
-- next due time.
--
-- KEYS[1]  namespace prefix
-- ARGV     queue ('o' orchestrator, 'w' worker), whether the claimed time
--          has come ('1': a claim still ahead was made since, by a fetcher
--          that will run at it, and is left alone; '0', on close: a claim
--          still ahead is the caller's own and is dropped)
-- Reply    1 when the standby was woken, 0 when not (none known, or the
--          claim was left alone), or an error 'DXPERM INVALID ...'
local q, come = U.arg(), U.arg() == '1'
if q ~= 'o' and q ~= 'w' then
  return U.fail('INVALID', 'queue ' .. q .. ' is neither o nor w')
end
if come and U.claimed(q, U.now()) then return 0 end
redis.call('HDEL', K.dueclaim(), q)
local standby = redis.call('HGET', K.dueclaim(), q .. ':s')
if not standby then return 0 end
U.nudge(standby)
return 1
