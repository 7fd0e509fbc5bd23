-- abandon_orchestration_item_with_note: abandon_orchestration_item and, when
-- the locked instance has no record yet (its start could not run), its
-- pending-start note (duroxide.PendingStartNoter), together: a note is only
-- ever written by the holder of the lock, so it cannot land on an instance
-- another runtime created meanwhile. An older note is replaced; the
-- instance's creation or deletion removes it (I.unnote).
--
-- KEYS[1]  namespace prefix
-- ARGV     token, delay ms, ignore attempt ('0'|'1'), orchestration,
--          version, attempt, max attempts, reason
-- Reply    1 when the note was written, 0 when the instance has a record
--          (abandoned without note), or an error 'DXPERM LOCK_LOST ...'
local token, delay, ignore = U.arg(), U.num(), U.arg() == '1'
local name, ver, attempt, max, reason = U.arg(), U.arg(), U.arg(), U.arg(), U.arg()
local now = U.now()
local inst, failure = O.abandon(token, delay, ignore, now)
if not inst then return failure end
if redis.call('EXISTS', K.inst(inst)) == 1 then return 0 end
local pk = K.pending(inst)
redis.call('DEL', pk)
redis.call('HSET', pk, 'name', name, 'ver', ver, 'att', attempt, 'max', max, 'why', reason, 'at', now)
redis.call('ZADD', K.ipending(), now, inst)
return 1
