-- lib_work: the worker queue.
--
-- An item is a hash wi:<seq> with fields j (JSON), q (tag queue: 'd' untagged,
-- 't:<tag>' tagged), s (session, absent for none), i/e/a (instance,
-- execution, activity: the identity cancellation uses), n (attempts),
-- st ('r' ready, 'd' delayed, 'l' locked) and, while locked, k (token) and
-- u (locked until).
--
-- A ready item without session sits in wq:<q> (score = seq, so each queue
-- is FIFO); wqs lists the queues, which an AnyTag fetch reads one by one
-- (there are few, and no index is written twice per item for them). A ready
-- session item sits in its session's queues sq:<q>:<sid> and sq:*:<sid>,
-- which are indexed by their first item (see lib_sess).
--
-- The lock token of an item is '<seq>:<nonce>', the nonce chosen by the
-- fetching client: an ack finds the item without a lookup. wtoks maps the
-- nonce alone to the seq, for a client whose fetch reply was lost: it knows
-- only the nonce, and gives the lock back by it.

-- The batch of expired locks and due items one call of maintenance handles.
W.MAINTAIN_BATCH = 100

-- A turn's ack that fetches for a worker parked in its process (the
-- ack_fetch_orchestration_item script with 'w') keeps aside the first plain
-- item it makes ready (U.keep), as lib_orch does for instances:
-- not queued and nobody told, but considered by the fetch (W.pick) with the
-- head of its queue and taken when it is the oldest, as in a sequence, where
-- each turn schedules the one activity its parked worker runs. W.flush
-- queues it when the fetch took something else. The kept entry
-- (U.kept('w')) holds its seq, queue q, order (its score once queued:
-- W.ready) and, when enqueued in this call, its json j.

-- flush queues the item kept aside, if the fetch did not take it.
function W.flush()
  local k = U.unkeep('w')
  if k then
    redis.call('ZADD', K.wq(k.q), U.id(k.order), k.seq)
    W.tell(k.q)
  end
end

-- ready offers an item to the fetchers that may take it (its state field
-- says 'r' already), or keeps it aside (U.keep). An item without session
-- is queued by its seq shifted by its priority pr (U.shift; field pr, absent
-- for none); session items keep their session's FIFO order. An item of
-- limit group g (lib_lim) waits in its group instead, in the same order.
function W.ready(seq, q, sid, now, g, pr)
  if sid then
    redis.call('ZADD', K.squeue(q, sid), seq, seq)
    redis.call('ZADD', K.squeue('*', sid), seq, seq)
    U.count('w_sready', 1)
    S.sync(sid, { q, '*' }, now)
    return
  end
  local order = U.shift(tonumber(seq), tonumber(pr))
  if g then
    L.ready(seq, q, g, now, order)
    return
  end
  if U.put_aside('w', { seq = seq, q = q, order = order }) then return end
  redis.call('ZADD', K.wq(q), U.id(order), seq)
  W.tell(q)
end

-- tell sets the ready marker of tag queue q. A new marker means no fetcher
-- of q was told of work since the queue was last seen empty (U.idle and
-- W.idle remove it): then, and only then, the AnyTag fetchers are told too,
-- and q is listed for them.
function W.tell(q)
  if U.ready(K.wwake(q)) then
    W.list(q)
    U.ready(K.wwake('*'))
  end
end

-- list lists tag queue q for the AnyTag fetchers, once per call.
function W.list(q)
  U.memo('wqs:' .. q, function() return redis.call('SADD', K.wqueues(), q) end)
end

-- unready withdraws a ready item from its queue (or from aside, or from
-- its limit group g; take: to lock it).
function W.unready(seq, q, sid, now, g, take)
  if g then
    L.unready(seq, q, g, now, take)
    return
  end
  if sid then
    redis.call('ZREM', K.squeue(q, sid), seq)
    redis.call('ZREM', K.squeue('*', sid), seq)
    U.count('w_sready', -1)
    S.sync(sid, { q, '*' }, now)
    return
  end
  local k = U.kept('w')
  if k and k.seq == seq then
    U.drop_aside('w')
    return
  end
  redis.call('ZREM', K.wq(q), seq)
end

-- enqueue adds an ActivityExecute; e and a identify it for cancellation,
-- name (its activity's) finds its priority, which the item keeps (field
-- pr) for every time it is made ready again, and with key ('' none) its
-- limit group (lib_lim), for an item without session whose name has a limit.
function W.enqueue(json, q, sid, inst, e, a, now, name, key)
  local seq = U.id(redis.call('INCR', K.seq()))
  local f = { 'j', json, 'q', q, 'i', inst, 'e', e, 'a', a, 'n', '0', 'st', 'r' }
  local pr = not sid and name and U.flow('pa:' .. name)
  if pr then f[#f + 1] = 'pr'; f[#f + 1] = pr end
  local g = false
  if sid then
    f[#f + 1] = 's'; f[#f + 1] = sid
  elseif name then
    g = L.group(name, key or '')
    if g then f[#f + 1] = 'L'; f[#f + 1] = g end
  end
  redis.call('HSET', K.witem(seq), unpack(f)) -- one write of every field
  if sid then S.add_item(sid) end
  redis.call('ZADD', K.wact(inst), '0', e .. ':' .. a .. ':' .. seq)
  W.ready(seq, q, sid, now, g, pr)
  local k = U.kept('w')
  if k and k.seq == seq then k.j = json end -- what W.take would read back
  return seq
end

-- lock gives a ready item (already withdrawn from its queue), fetched n
-- times so far, to the client's nonce until untl. It returns the new
-- attempt count and the lock token.
function W.lock(seq, q, sid, nonce, untl, now, n)
  n = n + 1
  local token = seq .. ':' .. nonce
  redis.call('HSET', K.witem(seq), 'st', 'l', 'k', token, 'u', U.id(untl), 'n', U.id(n))
  U.schedule(K.wgate(), K.wlocked(), untl, seq)
  redis.call('HSET', K.wtoks(), nonce, seq)
  return n, token
end

-- relock schedules the expiry of a locked item at untl (a renewal may
-- also shorten it).
function W.relock(seq, untl)
  redis.call('HSET', K.witem(seq), 'u', U.id(untl))
  U.schedule(K.wgate(), K.wlocked(), untl, seq)
end

-- locked returns the item a token holds: a full token, or the nonce alone
-- of a fetch whose reply was lost. nil when the token is unknown (never
-- issued, acked, cancelled, or its expired lock reclaimed).
function W.locked(token)
  local seq, nonce = string.match(token, '^(%d+):(.+)$')
  if not seq then
    nonce, seq = token, redis.call('HGET', K.wtoks(), token)
    if not seq then return nil end
  end
  local it = W.fields(seq)
  if it.k ~= seq .. ':' .. nonce then return nil end
  return it
end

-- forget removes the nonce of token from wtoks.
local function forget(token)
  if token then redis.call('HDEL', K.wtoks(), string.match(token, '^%d+:(.+)$') or token) end
end

-- fields reads what the queue functions need of an item (false when absent).
function W.fields(seq)
  local r = redis.call('HMGET', K.witem(seq), 'st', 'q', 's', 'i', 'e', 'a', 'k', 'u', 'L')
  return { seq = seq, st = r[1], q = r[2], s = r[3], i = r[4], e = r[5], a = r[6], k = r[7], u = tonumber(r[8]), g = r[9] }
end

-- unlock releases an item's lock: visible again now, or after delay ms.
-- ignore undoes the attempt its fetch counted (never below 0).
function W.unlock(seq, now, delay, ignore)
  local wk = K.witem(seq)
  local it = redis.call('HMGET', wk, 'k', 'q', 's', 'n', 'L', 'pr')
  forget(it[1])
  redis.call('HDEL', wk, 'k', 'u')
  redis.call('ZREM', K.wlocked(), seq)
  if it[5] then L.release(it[5], now) end
  if ignore and tonumber(it[4]) > 0 then redis.call('HINCRBY', wk, 'n', -1) end
  if delay > 0 then
    local at = now + delay
    redis.call('HSET', wk, 'st', 'd')
    U.schedule(K.wgate(), K.wdelay(), at, seq)
  else
    redis.call('HSET', wk, 'st', 'r')
    W.ready(seq, it[2], it[3], now, it[5], it[6])
  end
end

-- delete removes an item (it: W.fields) in whatever state it is: acked,
-- cancelled by its orchestration (the holder's next ack or renew fails) or
-- deleted with it.
function W.delete(it, now)
  local seq, st, sid = it.seq, it.st, it.s
  if not st then return 0 end
  if st == 'r' then
    W.unready(seq, it.q, sid, now, it.g)
  elseif st == 'd' then
    redis.call('ZREM', K.wdelay(), seq)
  else
    redis.call('ZREM', K.wlocked(), seq)
    forget(it.k)
    if it.g then L.release(it.g, now) end
  end
  redis.call('ZREM', K.wact(it.i), it.e .. ':' .. it.a .. ':' .. seq)
  redis.call('DEL', K.witem(seq))
  if sid then S.remove_item(sid) end
  return 1
end

-- cancel deletes the items scheduled as activity a of execution e of inst.
function W.cancel(inst, e, a, now)
  local prefix = e .. ':' .. a .. ':'
  local members = redis.call('ZRANGEBYLEX', K.wact(inst), '[' .. prefix, '(' .. e .. ':' .. a .. ';')
  for _, m in ipairs(members) do
    W.delete(W.fields(string.sub(m, #prefix + 1)), now)
  end
end

-- maintain applies what time has made due: expired item locks, delayed items
-- and expired sessions, a bounded number per call, when the gate says
-- something may be due.
function W.maintain(now)
  if U.gate(K.wgate()) > now then return end
  local n = W.MAINTAIN_BATCH
  for _, seq in ipairs(redis.call('ZRANGEBYSCORE', K.wlocked(), '-inf', now, 'LIMIT', 0, n)) do
    W.unlock(seq, now, 0, false)
  end
  for _, seq in ipairs(redis.call('ZRANGEBYSCORE', K.wdelay(), '-inf', now, 'LIMIT', 0, n)) do
    redis.call('ZREM', K.wdelay(), seq)
    local it = redis.call('HMGET', K.witem(seq), 'q', 's', 'L', 'pr')
    redis.call('HSET', K.witem(seq), 'st', 'r')
    W.ready(seq, it[1], it[2], now, it[3], it[4])
  end
  S.maintain(now, n)
  L.maintain(now, n)
  U.settle(K.wgate(), { K.wlocked(), K.wdelay(), K.slive(), K.lwait() })
end

-- due_count counts, without moving them, the items W.maintain would make
-- ready now: those whose lock expired and those whose delay ended (two range
-- counts, O(log n)).
function W.due_count(now)
  if U.gate(K.wgate()) > now then return 0 end
  return redis.call('ZCOUNT', K.wlocked(), '-inf', now) + redis.call('ZCOUNT', K.wdelay(), '-inf', now)
end

-- classes lists, for the caller's queues, each index it may take from with
-- the wake key of that index: plain items, and with an owner its sessions and
-- the claimable sessions. The any queue '*' reads every plain queue, with
-- the any wake key; c[4] names the queue's own wake key, which W.fetch
-- clears when the any fetcher goes idle (see W.ready). Session indexes list
-- only sessions with an item ready, so while the count of those items
-- (w_sready) is 0 they are empty and not read: a fetch costs one HGET
-- instead of two reads per queue. Their wake markers are then not cleared
-- either; one left set costs at most one fetch that finds nothing. The
-- group index of a queue (lgr, lib_lim; its class has g set) is read only
-- while some item waits in a limit group (w_lim > 0).
function W.classes(queues, owner)
  local out = {}
  local st = redis.call('HMGET', K.stats(), 'w_sready', 'w_lim')
  if owner and tonumber(st[1] or '0') <= 0 then owner = false end
  local lim = tonumber(st[2] or '0') > 0
  for _, q in ipairs(queues) do
    if q == '*' then
      -- the any wake key itself, for a namespace with no queue yet
      out[#out + 1] = { false, K.wwake('*'), false }
      for _, each in ipairs(redis.call('SMEMBERS', K.wqueues())) do
        out[#out + 1] = { K.wq(each), K.wwake('*'), false, K.wwake(each) }
        if lim then out[#out + 1] = { K.lgr(each), K.wwake('*'), false, K.wwake(each), g = true, q = each } end
      end
    else
      out[#out + 1] = { K.wq(q), K.wwake(q), false }
      if lim then out[#out + 1] = { K.lgr(q), K.wwake(q), false, g = true, q = q } end
    end
    if owner then
      out[#out + 1] = { K.sowned(q, owner), K.owned(q, owner), true }
      out[#out + 1] = { K.sclaim(q), K.cwake(q), true }
    end
  end
  return out
end

-- pick returns the eligible item with the lowest seq across classes: its seq
-- and, for a session head, the session. It notes in each class how many
-- entries, up to 2, its index had (c.seen) and the first (c.first).
function W.pick(classes)
  local bestseq, bestsid, bestorder
  local k = U.kept('w')
  for _, c in ipairs(classes) do
    local r = {}
    if c[1] then r = redis.call('ZRANGE', c[1], '0', '1', 'WITHSCORES') end
    if k and not c[3] and c[1] == K.wq(k.q) then
      -- the kept item, as if queued: it sorts after r[1] unless ahead
      local order = k.order
      if not r[1] or order < tonumber(r[2]) then
        r = { k.seq, order, r[1], r[2] }
      else
        r = { r[1], r[2], k.seq, order }
      end
    end
    c.seen, c.first = math.min(#r / 2, 2), r[1]
    if r[1] then
      local order = tonumber(r[2])
      if not bestorder or order < bestorder then
        bestorder = order
        if c[3] then
          bestseq, bestsid = U.id(order), r[1]
        elseif c.g then
          bestseq, bestsid = c, r[1] -- a group: its first item, read below
        else
          bestseq, bestsid = r[1], false
        end
      end
    end
  end
  if type(bestseq) == 'table' then
    -- a group's score is its first item's order, which a priority shifts
    -- away from its seq: the item is read once, for the group picked
    bestseq, bestsid = redis.call('ZRANGE', K.lgq(bestseq.q, bestsid), '0', '0')[1], false
  end
  return bestseq, bestsid
end

-- take locks the picked item for the client's nonce, claiming its session
-- for owner.
function W.take(seq, sid, owner, nonce, lock_ms, session_ms, now)
  local k = U.kept('w')
  local r
  if k and k.seq == seq and k.j then
    r = { k.q, k.j, '0' } -- enqueued in this call, never fetched
  else
    r = redis.call('HMGET', K.witem(seq), 'q', 'j', 'n', 'L')
  end
  local q, g = r[1], r[4]
  if sid then S.claim(sid, owner, session_ms, now) end
  W.unready(seq, q, sid, now, g, true)
  local n, token = W.lock(seq, q, sid, nonce, now + lock_ms, now, tonumber(r[3]) or 0)
  if g then L.take(g, q, now) end
  return { 1, r[2], token, n }
end

-- left reports whether class c still has eligible entries after the take of
-- seq (of session sid, or false). A plain index lost at most seq since pick
-- read it. A session index may have gained or lost sessions through the
-- claim of sid, so it is counted then; a plain take leaves it as pick read
-- it (its members are session ids, which a seq may equal: c.first is not
-- compared). A group index may have changed by the take (L.take): counted.
function W.left(c, seq, sid)
  if c.g then return redis.call('ZCARD', c[1]) > 0 end
  if c[3] then
    if sid then return redis.call('ZCARD', c[1]) > 0 end
    return c.seen > 0
  end
  return c.seen == 2 or (c.seen == 1 and c.first ~= seq)
end

-- ack deletes the item token holds and enqueues its completion (has: json
-- for instance target) for the orchestrator. It returns the error reply for
-- a lost lock, before any write, or nil.
function W.ack(token, has, target, json, now)
  local it = W.locked(token)
  if not it or it.u <= now then
    return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired (activity cancelled or lock lost)')
  end
  if it.s then S.touch(it.s, now) end
  W.delete(it, now)
  if has then O.enqueue(target, json, now, now) end
  return nil
end

-- fetch_args reads fetch_work_item's ARGV: nonce, lock ms, owner (false
-- without session routing), session lock ms and the tag queues.
function W.fetch_args()
  local nonce, lock_ms = U.arg(), U.num()
  local routed, owner, session_ms = U.arg() == '1', U.arg(), U.num()
  local queues = {}
  for i = 1, U.num() do queues[i] = U.arg() end
  if not routed then owner = false end
  return nonce, lock_ms, owner, session_ms, queues
end

-- idle records that the fetcher of classes has nothing more to take and
-- returns when it must run again (U.idle, for each wake key). An any
-- fetcher also clears the ready markers of the queues it read, all empty
-- now, so that the next item readied in any of them tells it (W.ready).
function W.idle(classes, now)
  local wake, seen = now + U.REFRESH, {}
  for _, c in ipairs(classes) do
    if c[4] then U.unready(c[4]) end
    if not seen[c[2]] then
      seen[c[2]] = true
      wake = U.idle(c[2], now)
    end
  end
  return wake
end

-- fetch locks the eligible item with the lowest seq across queues for the
-- client's nonce and returns fetch_work_item's reply; pass says whether
-- the caller consumed a wake-up marker (U.PASS_ON).
function W.fetch(nonce, lock_ms, owner, session_ms, queues, now, pass)
  W.maintain(now)
  local classes = W.classes(queues, owner)
  local seq, sid = W.pick(classes)
  if not seq then return { 0, now, W.idle(classes, now) } end
  local res = W.take(seq, sid, owner, nonce, lock_ms, session_ms, now)
  local more = false
  for _, c in ipairs(classes) do
    if W.left(c, seq, sid) then
      if pass then U.ready(c[2]) end
      more = true
    end
  end
  res[5] = now
  res[6] = false
  if not more then res[6] = W.idle(classes, now) end
  return res
end
