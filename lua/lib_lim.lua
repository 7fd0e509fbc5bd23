-- lib_lim: flow control of worker items at dispatch (docs/flow-control.md).
--
-- A limit is set per activity name in lim (name -> '<concurrency> <rate/s>
-- <burst>', 0 for none). An item without session whose name has a limit
-- when it is enqueued is a limited item: its hash holds L, its limit group
-- ('<#name>:<name><key>', the key the caller gave, or none), and while ready
-- it sits in its group's queue lgq:<q>:<group> (seq -> seq) instead of
-- wq:<q>. A group that may run one more item (L.open) and has ready items in
-- tag queue q is listed in lgr:<q> (group -> seq of its first item), which
-- the fetch reads as one more index beside wq:<q> (W.classes), so a fetch
-- stays a few O(log n) reads: a group at capacity is not listed, and the
-- items behind it in wq:<q> or in other groups are taken as if it were not
-- there (no head-of-line blocking).
--
-- A locked limited item holds a lease: lrun counts them per group, the lock
-- (W.take) adds one, and whatever ends the lock (ack, abandon, cancel,
-- delete, lock expiry in W.maintain) gives it back (L.release), so a worker
-- that dies holding one returns it when its lock expires. The rate is a
-- token bucket per group in lbkt ('<tokens> <ms>'): a take spends one; a
-- group out of tokens leaves lgr and waits in lwait until its next token,
-- under the worker gate, so the due loop (W.maintain) lists it again then.
-- A limit deleted while items wait in groups leaves them where they are,
-- open from then on.
--
-- The stats field w_lim counts items ready in groups: while it is 0 a fetch
-- reads no group index (W.classes reads it with w_sready, one HMGET), and a
-- namespace without limits pays one HGET of lim per enqueue.

-- conf returns the limit of activity name: {c = concurrency, r = tokens per
-- ms, b = burst}, or false when it has none (read once per call).
function L.conf(name)
  return U.memo('lim:' .. name, function()
    local v = redis.call('HGET', K.lim(), name)
    if not v then return false end
    local c, r, b = string.match(v, '^(%d+) ([%d%.]+) (%d+)$')
    if not c then return false end
    return { c = tonumber(c), r = tonumber(r) / 1000, b = tonumber(b) }
  end)
end

-- group names the limit group of an item of activity name with key ('':
-- none), or false when name has no limit.
function L.group(name, key)
  if not L.conf(name) then return false end
  return #name .. ':' .. name .. key
end

-- name returns the activity name of group g.
function L.name(g)
  local n, rest = string.match(g, '^(%d+):(.*)$')
  return string.sub(rest, 1, tonumber(n))
end

-- tokens returns the tokens group g (with limit f) has at now.
function L.tokens(g, f, now)
  local v = redis.call('HGET', K.lbkt(), g)
  if not v then return f.b end
  local t, at = string.match(v, '^(%S+) (%d+)$')
  return math.min(f.b, tonumber(t) + (now - tonumber(at)) * f.r)
end

-- open reports whether group g may run one more item now. Out of tokens,
-- with a lease free, it waits in lwait until its next token.
function L.open(g, now)
  local f = L.conf(L.name(g))
  if not f then return true end
  if f.c > 0 and tonumber(redis.call('HGET', K.lrun(), g) or '0') >= f.c then return false end
  if f.r > 0 then
    local t = L.tokens(g, f, now)
    if t < 1 then
      U.schedule(K.wgate(), K.lwait(), now + math.ceil((1 - t) / f.r), g)
      return false
    end
  end
  return true
end

-- list files group g in tag queue q's group index by its first ready item
-- when open, else withdraws it, and tells q's fetchers of a group listed anew.
function L.list(g, q, open)
  local head = open and redis.call('ZRANGE', K.lgq(q, g), '0', '0')[1]
  if head then
    if redis.call('ZADD', K.lgr(q), head, g) == 1 then W.tell(q) end
  else
    redis.call('ZREM', K.lgr(q), g)
  end
end

-- sync lists or withdraws group g in every tag queue, after its capacity
-- changed (a lease given back, a token due).
function L.sync(g, now)
  local open = L.open(g, now)
  for _, q in ipairs(redis.call('SMEMBERS', K.wqueues())) do L.list(g, q, open) end
end

-- ready queues the ready item seq of tag queue q in its group g.
function L.ready(seq, q, g, now)
  redis.call('ZADD', K.lgq(q, g), seq, seq)
  redis.call('SADD', K.wqueues(), q)
  redis.call('SADD', K.lgroups(L.name(g)), g)
  U.count('w_lim', 1)
  L.list(g, q, L.open(g, now))
end

-- unready withdraws the ready item seq from its group g; take says it is
-- withdrawn to be locked (L.take then updates the index).
function L.unready(seq, q, g, now, take)
  redis.call('ZREM', K.lgq(q, g), seq)
  U.count('w_lim', -1)
  if not take then L.list(g, q, L.open(g, now)) end
end

-- take counts the lease and spends the token of an item of group g locked
-- now from tag queue q, and lists the group again as it now stands.
function L.take(g, q, now)
  redis.call('HINCRBY', K.lrun(), g, 1)
  local f = L.conf(L.name(g))
  if f and f.r > 0 then
    redis.call('HSET', K.lbkt(), g, tostring(L.tokens(g, f, now) - 1) .. ' ' .. U.id(now))
  end
  local open = L.open(g, now)
  if open then
    L.list(g, q, true)
  else
    for _, each in ipairs(redis.call('SMEMBERS', K.wqueues())) do L.list(g, each, false) end
  end
end

-- release gives back the lease of a locked item of group g.
function L.release(g, now)
  if redis.call('HINCRBY', K.lrun(), g, -1) <= 0 then redis.call('HDEL', K.lrun(), g) end
  L.sync(g, now)
end

-- maintain lists again the groups whose next token is due, at most n.
function L.maintain(now, n)
  for _, g in ipairs(redis.call('ZRANGEBYSCORE', K.lwait(), '-inf', now, 'LIMIT', 0, n)) do
    redis.call('ZREM', K.lwait(), g)
    L.sync(g, now)
  end
end

-- set sets (conf: '<concurrency> <rate> <burst>') or, conf false, deletes
-- the limit of name, and lists again each of its groups as it now stands;
-- a group with no ready item and no lease is forgotten. It returns whether
-- name had a limit.
function L.set(name, conf, now)
  local had = redis.call('HEXISTS', K.lim(), name) == 1
  if conf then
    redis.call('HSET', K.lim(), name, conf)
  else
    redis.call('HDEL', K.lim(), name)
  end
  U.forget('lim:' .. name)
  local queues = redis.call('SMEMBERS', K.wqueues())
  for _, g in ipairs(redis.call('SMEMBERS', K.lgroups(name))) do
    local open, used = L.open(g, now), redis.call('HEXISTS', K.lrun(), g) == 1
    for _, q in ipairs(queues) do
      L.list(g, q, open)
      used = used or redis.call('EXISTS', K.lgq(q, g)) == 1
    end
    if not used then
      redis.call('SREM', K.lgroups(name), g)
      redis.call('HDEL', K.lbkt(), g)
      redis.call('ZREM', K.lwait(), g)
    end
  end
  return had
end
