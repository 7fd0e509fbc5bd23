-- lib_sess: session routing.
--
-- A session record s:<sid> holds o (owner), u (locked until), l (last
-- activity), n (items of the session in any state) and the index entry of its
-- head: hs (head seq), hq (its tag queue), hc ('o' owned, 'c' claimable), ho
-- (owner it is filed under). Only the head of a session's ready queue is
-- indexed, in sc:<q> when claimable or so:<q>:<owner> when owned (and in the
-- '*' partition of each), scored by the head's seq. A fetch therefore reads
-- one entry per index it may take from and never walks over other owners'
-- sessions; claiming or expiring a session moves one entry, not its items.
--
-- Claimed sessions are in slive by lock expiry; when a lock expires (seen by
-- maintenance) the session moves to sidle and its head becomes claimable.
-- Sessions in sidle without items are also in sorph, for cleanup.

-- owner returns the owner holding a valid lock on the session, or false.
function S.owner(sid, now)
  local r = redis.call('HMGET', K.sess(sid), 'o', 'u')
  if r[1] and tonumber(r[2]) > now then return r[1] end
  return false
end

-- add_item counts a new item of the session (creating the record).
function S.add_item(sid)
  if redis.call('HINCRBY', K.sess(sid), 'n', 1) == 1 then
    redis.call('SREM', K.sorphan(), sid)
  end
end

-- remove_item counts an item gone. A session nobody ever claimed disappears
-- with its last item; an expired one becomes an orphan for cleanup.
function S.remove_item(sid)
  local sk = K.sess(sid)
  if redis.call('HINCRBY', sk, 'n', -1) > 0 then return end
  if not redis.call('HGET', sk, 'o') then
    redis.call('DEL', sk)
  elseif redis.call('ZSCORE', K.sidle(), sid) then
    redis.call('SADD', K.sorphan(), sid)
  end
end

-- unfile removes the session's head entry from the index it is filed in.
local function unfile(sid, hq, hc, ho)
  if hc == 'o' then
    redis.call('ZREM', K.sowned(hq, ho), sid)
    redis.call('ZREM', K.sowned('*', ho), sid)
  else
    redis.call('ZREM', K.sclaim(hq), sid)
    redis.call('ZREM', K.sclaim('*'), sid)
  end
end

-- file indexes the session's head and wakes the fetchers that may take it.
local function file(sid, hs, hq, hc, ho, now)
  local order = tonumber(hs)
  if hc == 'o' then
    redis.call('ZADD', K.sowned(hq, ho), order, sid)
    redis.call('ZADD', K.sowned('*', ho), order, sid)
    U.ready(K.owned(hq, ho))
    U.ready(K.owned('*', ho))
    -- when the owner's lock runs out the head becomes everybody's
    local untl = tonumber(redis.call('HGET', K.sess(sid), 'u'))
    U.due(K.cwake(hq), untl, now)
    U.due(K.cwake('*'), untl, now)
  else
    redis.call('ZADD', K.sclaim(hq), order, sid)
    redis.call('ZADD', K.sclaim('*'), order, sid)
    U.ready(K.cwake(hq))
    U.ready(K.cwake('*'))
  end
end

-- rehead makes the session's index entry match its current head item and
-- owner. Cheap when nothing changed.
function S.rehead(sid, now)
  local sk = K.sess(sid)
  local old = redis.call('HMGET', sk, 'hs', 'hq', 'hc', 'ho')
  local hs, hq, hc, ho = false, false, false, false
  local head = redis.call('ZRANGE', K.squeue(sid), 0, 0)
  if head[1] then
    hs = head[1]
    hq = redis.call('HGET', K.witem(hs), 'q')
    ho = S.owner(sid, now)
    if ho then hc = 'o' else hc = 'c' end
  end
  if old[1] == hs and old[2] == hq and old[3] == hc and old[4] == ho then return end
  if old[1] then unfile(sid, old[2], old[3], old[4]) end
  if not hs then
    redis.call('HDEL', sk, 'hs', 'hq', 'hc', 'ho')
    return
  end
  redis.call('HSET', sk, 'hs', hs, 'hq', hq, 'hc', hc)
  if ho then redis.call('HSET', sk, 'ho', ho) else redis.call('HDEL', sk, 'ho') end
  file(sid, hs, hq, hc, ho, now)
end

-- claim gives the session to owner until now + lock_ms and records activity.
-- Every fetch of a session item does it, so it also extends the owner's lock.
function S.claim(sid, owner, lock_ms, now)
  local sk = K.sess(sid)
  local prev = redis.call('HGET', sk, 'o')
  if prev and prev ~= owner then redis.call('SREM', K.sowner(prev), sid) end
  local untl = now + lock_ms
  redis.call('HSET', sk, 'o', owner, 'u', untl, 'l', now)
  redis.call('SADD', K.sowner(owner), sid)
  redis.call('ZADD', K.slive(), untl, sid)
  redis.call('ZREM', K.sidle(), sid)
  redis.call('SREM', K.sorphan(), sid)
end

-- touch records activity on a session, but only while its lock is valid: an
-- expired session must be free to go idle and be taken over.
function S.touch(sid, now)
  if S.owner(sid, now) then redis.call('HSET', K.sess(sid), 'l', now) end
end

-- expire turns a session whose lock ran out into a claimable one.
function S.expire(sid, now)
  local untl = redis.call('ZSCORE', K.slive(), sid)
  redis.call('ZREM', K.slive(), sid)
  redis.call('ZADD', K.sidle(), untl, sid)
  S.rehead(sid, now)
  if tonumber(redis.call('HGET', K.sess(sid), 'n') or '0') <= 0 then
    redis.call('SADD', K.sorphan(), sid)
  end
end

-- maintain expires at most batch sessions whose lock ran out; returns how many.
function S.maintain(now, batch)
  local due = redis.call('ZRANGEBYSCORE', K.slive(), '-inf', now, 'LIMIT', 0, batch)
  for _, sid in ipairs(due) do S.expire(sid, now) end
  return #due
end

-- renew extends the valid, non-idle sessions of owner; returns how many.
function S.renew(owner, extend_ms, idle_ms, now)
  local n = 0
  local ok = K.sowner(owner)
  for _, sid in ipairs(redis.call('SMEMBERS', ok)) do
    local r = redis.call('HMGET', K.sess(sid), 'o', 'u', 'l')
    if r[1] ~= owner then
      redis.call('SREM', ok, sid)
    elseif tonumber(r[2]) > now and tonumber(r[3]) + idle_ms > now then
      local untl = now + extend_ms
      redis.call('HSET', K.sess(sid), 'u', untl)
      redis.call('ZADD', K.slive(), untl, sid)
      n = n + 1
    end
  end
  return n
end

-- remove deletes an orphaned session: lock expired, no items. Returns 1 when
-- it was removed.
function S.remove(sid, now)
  local sk = K.sess(sid)
  redis.call('SREM', K.sorphan(), sid)
  local r = redis.call('HMGET', sk, 'o', 'u', 'n')
  if tonumber(r[3] or '0') > 0 or (r[2] and tonumber(r[2]) > now) then return 0 end
  if r[1] then redis.call('SREM', K.sowner(r[1]), sid) end
  redis.call('ZREM', K.sidle(), sid)
  redis.call('ZREM', K.slive(), sid)
  redis.call('DEL', sk)
  return 1
end
