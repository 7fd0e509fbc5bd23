-- lib_lim: flow control of worker items at dispatch (docs/flow-control.md).
--
-- A limit is set per activity name in lim (name -> '<concurrency> <rate/s>
-- <burst>', 0 for none). An item without session whose name has a limit
-- when it is enqueued is a limited item: its hash holds L, its limit group
-- ('<#name>:<name>', then '+<key>' when the caller gave a limit key: the
-- limit then holds per key value), and while ready
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
-- token bucket per group in lbkt:<group> ('<tokens> <ms>'), which expires
-- when the bucket would be full again (a missing bucket is full), so the
-- groups of keys no longer used leave nothing behind: a take spends one; a
-- group out of tokens leaves lgr and waits in lwait until its next token,
-- under the worker gate, so the due loop (W.maintain) lists it again then.
-- A limit deleted while items wait in groups leaves them where they are,
-- open from then on.
--
-- The stats field w_lim counts items ready in groups: while it is 0 a fetch
-- reads no group index (W.classes reads it with w_sready, one HMGET). A
-- limit also sets the field 'l:<name>' of the flow settings (K.flow()), so
-- a namespace without any flow setting reads no limit at all: the EXISTS
-- of the settings, once per call, answers for both (U.flowing).

-- conf returns the limit of activity name: {c = concurrency, r = tokens per
-- ms, b = burst}, or false when it has none (read once per call). grouped
-- says an item of name is in a limit group: its name had a limit, so the
-- flow settings' gate is not worth a read (a deleted limit reads as none).
function L.conf(name, grouped)
  return U.memo('lim:' .. name, function()
    -- a limit marks the flow settings too (L.set): without them, none
    if not grouped and not U.flowing() then return false end
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
  local v = redis.call('GET', K.lbkt(g))
  if not v then return f.b end
  local t, at = string.match(v, '^(%S+) (%d+)$')
  return math.min(f.b, tonumber(t) + (now - tonumber(at)) * f.r)
end

-- open reports whether group g may run one more item now. Out of tokens,
-- with a lease free, it waits in lwait until its next token. A caller that
-- knows the group's leases (run) or tokens (t) passes them.
function L.open(g, now, run, t)
  local f = L.conf(L.name(g), true)
  if not f then return true end
  if f.c > 0 and (run or tonumber(redis.call('HGET', K.lrun(), g) or '0')) >= f.c then return false end
  if f.r > 0 then
    if now == 0 then now = U.now() end -- an enqueue without clock (enqueue_for_worker)
    t = t or L.tokens(g, f, now)
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
  local head = open and redis.call('ZRANGE', K.lgq(q, g), '0', '0', 'WITHSCORES')
  if head and head[1] then
    if redis.call('ZADD', K.lgr(q), head[2], g) == 1 then W.tell(q) end
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

-- ready queues the ready item seq of tag queue q in its group g at order
-- (its seq shifted by its priority, W.ready): groups and the queue's plain
-- items are weighed by the same scores. Behind an earlier item it changes
-- nothing in the group index.
function L.ready(seq, q, g, now, order)
  local gq = K.lgq(q, g)
  order = U.id(order or tonumber(seq))
  redis.call('ZADD', gq, order, seq)
  W.list(q)
  U.count('w_lim', 1)
  if redis.call('ZRANGE', gq, '0', '0')[1] ~= seq then return end
  if L.open(g, now) then
    if redis.call('ZADD', K.lgr(q), order, g) == 1 then W.tell(q) end
  else
    redis.call('ZREM', K.lgr(q), g)
  end
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
  local run, t = redis.call('HINCRBY', K.lrun(), g, 1), nil
  local f = L.conf(L.name(g), true)
  if f and f.r > 0 then
    t = L.tokens(g, f, now) - 1
    -- full again after (b - t) / r ms: then a missing bucket says as much
    redis.call('SET', K.lbkt(g), tostring(t) .. ' ' .. U.id(now), 'PX', U.id(math.ceil((f.b - t) / f.r)))
  end
  local open = L.open(g, now, run, t)
  if open then
    L.list(g, q, true)
  else
    for _, each in ipairs(redis.call('SMEMBERS', K.wqueues())) do L.list(g, each, false) end
  end
end

-- release gives back the lease of a locked item of group g. Only a group
-- its concurrency held back changes: one open is listed already, and one
-- out of tokens waits in lwait.
function L.release(g, now)
  local run = redis.call('HINCRBY', K.lrun(), g, -1)
  if run <= 0 then redis.call('HDEL', K.lrun(), g) end
  local f = L.conf(L.name(g), true)
  if f and f.c > 0 and run == f.c - 1 then L.sync(g, now) end
end

-- maintain lists again the groups whose next token is due, at most n.
function L.maintain(now, n)
  for _, g in ipairs(redis.call('ZRANGEBYSCORE', K.lwait(), '-inf', now, 'LIMIT', 0, n)) do
    redis.call('ZREM', K.lwait(), g)
    L.sync(g, now)
  end
end

-- groups lists the groups of name that hold an item: a group with a ready
-- item is listed in a group index (open), holds a lease (lrun), or waits
-- for a token (lwait), so these are read, not every group ever used. Their
-- number bounds the cost; set_limit alone calls it.
function L.groups(name)
  local prefix, seen, out = #name .. ':' .. name, {}, {}
  local function add(g)
    if string.sub(g, 1, #prefix) == prefix and L.name(g) == name and not seen[g] then
      seen[g] = true
      out[#out + 1] = g
    end
  end
  for _, g in ipairs(redis.call('HKEYS', K.lrun())) do add(g) end
  for _, g in ipairs(redis.call('ZRANGE', K.lwait(), '0', '-1')) do add(g) end
  for _, q in ipairs(redis.call('SMEMBERS', K.wqueues())) do
    for _, g in ipairs(redis.call('ZRANGE', K.lgr(q), '0', '-1')) do add(g) end
  end
  return out
end

-- set sets (conf: '<concurrency> <rate> <burst>') or, conf false, deletes
-- the limit of name, and lists again each of its groups as it now stands.
-- It returns whether name had a limit.
function L.set(name, conf, now)
  local had = redis.call('HEXISTS', K.lim(), name) == 1
  if conf then
    redis.call('HSET', K.lim(), name, conf)
    redis.call('HSET', K.flow(), 'l:' .. name, '1')
  else
    redis.call('HDEL', K.lim(), name)
    redis.call('HDEL', K.flow(), 'l:' .. name)
  end
  U.forget('lim:' .. name)
  U.forget('flow')
  for _, g in ipairs(L.groups(name)) do
    redis.call('ZREM', K.lwait(), g)
    L.sync(g, now)
  end
  return had
end
