-- lib_sess: session routing.
--
-- A session's ready items are kept per tag queue, in sq:<q>:<sid> (FIFO) and
-- sq:*:<sid> (all of them). For each of those queues the session is indexed
-- once, by the seq of its first ready item: in sc:<q> while claimable (no
-- owner, or its lock expired) or in so:<q>:<owner> while owned. A fetch reads
-- one entry per index it may take from, so it never walks over other owners'
-- sessions or over items its tag filter excludes, and items reach a worker in
-- FIFO order among those it can take. Claiming or expiring a session moves
-- one index entry per tag queue, not its items.
--
-- The record s:<sid> holds o (owner), u (locked until), l (last activity),
-- n (items of the session in any state), hc/ho (the class the session is
-- filed under: 'o' with owner ho, or 'c') and f:<q> (the seq filed for queue
-- q). Claimed sessions are in slive by lock expiry; when a lock expires (seen
-- by maintenance) the session moves to sidle and is refiled as claimable.
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

-- index returns the index key of queue q for a class ('o' + owner, or 'c').
local function index(q, class, owner)
  if class == 'o' then return K.sowned(q, owner) end
  return K.sclaim(q)
end

-- file indexes the session's queue q at order and wakes the fetchers that may
-- take from it. An owned entry becomes the claimable fetchers' when the
-- owner's lock runs out: its expiry in slive has the due loop tell them.
local function file(sid, q, order, class, owner, now)
  redis.call('ZADD', index(q, class, owner), order, sid)
  if class == 'o' then
    U.ready(K.owned(q, owner))
  else
    U.ready(K.cwake(q))
  end
end

-- refile moves every indexed queue of the session to the class its lock
-- gives it now (owned by the lock holder, or claimable).
local function refile(sid, now)
  local sk = K.sess(sid)
  local owner = S.owner(sid, now)
  local class = owner and 'o' or 'c'
  local r = redis.call('HMGET', sk, 'hc', 'ho')
  if r[1] == class and (r[2] or false) == owner then return class, owner end
  local f = redis.call('HGETALL', sk)
  for i = 1, #f, 2 do
    local q = string.match(f[i], '^f:(.*)$')
    if q then
      if r[1] then redis.call('ZREM', index(q, r[1], r[2]), sid) end
      file(sid, q, tonumber(f[i + 1]), class, owner, now)
    end
  end
  redis.call('HSET', sk, 'hc', class)
  if owner then redis.call('HSET', sk, 'ho', owner) else redis.call('HDEL', sk, 'ho') end
  return class, owner
end

-- sync brings the session's index entries up to date after its queues qs
-- changed (or, with qs empty, after its lock did).
function S.sync(sid, qs, now)
  local sk = K.sess(sid)
  local class, owner = refile(sid, now)
  for _, q in ipairs(qs) do
    local head = redis.call('ZRANGE', K.squeue(q, sid), 0, 0)[1] or false
    local filed = redis.call('HGET', sk, 'f:' .. q) or false
    if head ~= filed then
      if filed then redis.call('ZREM', index(q, class, owner), sid) end
      if head then
        file(sid, q, tonumber(head), class, owner, now)
        redis.call('HSET', sk, 'f:' .. q, head)
      else
        redis.call('HDEL', sk, 'f:' .. q)
      end
    end
  end
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
  U.schedule(K.wgate(), K.slive(), untl, sid)
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
  S.sync(sid, {}, now)
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
      U.schedule(K.wgate(), K.slive(), untl, sid)
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
