-- lib_inst: instance and execution records, history, and the management
-- indexes that must change in the same script as the data they index.

-- TERMINAL lists the statuses that end an execution.
I.TERMINAL = { Completed = true, Failed = true, ContinuedAsNew = true }

-- check_ids validates that ids (decimal strings, in delta order) strictly
-- increase and follow the last event id stored for the execution. Returns
-- the error reply to return (U.fail), or nil, whether the execution has
-- events (then it has a record: ensure_exec need not look) and the bytes
-- of history it holds (for I.append). History is append-only and ordered by
-- event id, so this one comparison also rejects duplicates.
function I.check_ids(inst, eid, ids)
  local r = redis.call('HMGET', K.exec(inst, eid), 'max', 'bytes')
  local max = r[1]
  local prev = max or '0'
  for _, id in ipairs(ids) do
    if U.cmpid(id, prev) <= 0 then
      return U.fail('DUPLICATE', 'event_id ' .. id .. ' of instance ' .. inst .. ' execution ' .. eid ..
        ' is not after event_id ' .. prev .. ' (duplicate or out of order); nothing was written')
    end
    prev = id
  end
  return nil, max ~= false, tonumber(r[2] or '0')
end

-- ensure_exec creates the execution record when it is missing (status
-- Running) and registers the execution with its instance; known says the
-- caller saw the record (check_ids). It reports whether it created it. Its
-- start time goes into upd (optional: fields I.append writes) when given.
function I.ensure_exec(inst, eid, now, known, upd)
  if known then return false end
  local ek = K.exec(inst, eid)
  if redis.call('HSETNX', ek, 'st', 'Running') == 0 then return false end
  if upd then
    upd[#upd + 1] = 't0'
    upd[#upd + 1] = now
  else
    redis.call('HSET', ek, 't0', now)
  end
  -- the id as score, given as text: a u64 is not a Lua number
  redis.call('ZADD', K.execs(inst), eid, eid)
  U.count('executions', 1)
  return true
end

-- append adds validated events to the execution's history list without
-- reading what is already there (a corrupt stored event must not stop an
-- ack). upd (optional) holds more field, value pairs of the execution record
-- to write with its last event id (I.status_fields); had is the history's
-- size in bytes as check_ids read it, so the new size goes in the same HSET.
function I.append(inst, eid, ids, jsons, upd, had)
  local ek = K.exec(inst, eid)
  upd = upd or {}
  if #jsons > 0 then
    local hk = K.history(inst, eid)
    local bytes = had
    for _, json in ipairs(jsons) do bytes = bytes + #json end
    U.chunked('RPUSH', hk, jsons)
    upd[#upd + 1] = 'max'
    upd[#upd + 1] = ids[#ids]
    upd[#upd + 1] = 'bytes'
    upd[#upd + 1] = U.id(bytes)
    U.count('events', #jsons)
  end
  if #upd > 0 then redis.call('HSET', ek, unpack(upd)) end
end

-- latest returns the highest execution id of inst that has a record
-- (history is only ever written with one), or false when there is none. The
-- index scores ids as doubles, which tie above 2^53: there the ids sharing the
-- top score are compared exactly. Ids of up to 15 digits are below 2^53 and
-- tie with none (the score is not parsed: miniredis's tonumber fails on
-- integers of 2^63 and up).
function I.latest(inst)
  local top = redis.call('ZREVRANGE', K.execs(inst), 0, 0, 'WITHSCORES')
  if not top[1] then return false end
  local best = top[1]
  if #best <= 15 then return best end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.execs(inst), top[2], top[2])) do
    if U.cmpid(id, best) > 0 then best = id end
  end
  return best
end

-- info returns the record of inst with the status and output of its
-- current execution and its pause state, {name, version, current
-- execution, created, updated, parent, status, output, paused since (false
-- when not paused), held}, or false for an unknown instance. The pause
-- state is the record's flag 'pz' (pause_instance) and the number of
-- messages waiting for the next turn (those of oq, the count
-- InstancePauseState reads); then since when its orchestration name is
-- paused (false: it is not).
function I.info(inst)
  local r = redis.call('HMGET', K.inst(inst), 'name', 'ver', 'cur', 'created', 'updated', 'parent', 'pz')
  if not r[3] then return false end
  local e = redis.call('HMGET', K.exec(inst, r[3]), 'st', 'out')
  local np = r[1] and U.flow('z:' .. r[1])
  return { r[1], r[2], r[3], r[4], r[5], r[6], e[1] or 'Running', e[2], r[7], redis.call('ZCARD', K.oq(inst)), np }
end

-- set_parent records the parent of inst (old: the one recorded, created:
-- its creation time) and indexes inst as its child; only roots are
-- candidates for bulk deletion.
function I.set_parent(inst, parent, old, created)
  if old == parent then return end
  if old then redis.call('ZREM', K.ichildren(old), inst) end
  redis.call('HSET', K.inst(inst), 'parent', parent)
  redis.call('ZADD', K.ichildren(parent), created, inst)
  redis.call('ZREM', K.iterminal(), inst)
end

-- known reports whether inst has a record or a start waiting in its queue
-- (O.enqueue marks one with 'ps' in om until the record is made).
function I.known(inst)
  return redis.call('EXISTS', K.inst(inst)) == 1 or redis.call('HEXISTS', K.om(inst), 'ps') == 1
end

-- apply_metadata creates or updates the instance record from an ack's
-- metadata. Returns the record's cur, ist, created and parent afterwards
-- (what reindex_status files it by), or false when it has none: an ack
-- without orchestration name cannot create one. Its fifth and sixth values
-- are the KV flags kv0 and kvd0 (V.commit); its field created says this
-- call made the record, moved that it changed cur.
--
-- A record is created with its incarnation 'inc', new in the namespace's
-- sequence, so a lazy fetch's cursor tells an instance created again after
-- a delete from the one before. One a lazy fetch of the locked instance
-- already handed out (inc: the lock's om field, see O.take) is kept.
function I.apply_metadata(inst, eid, name, ver, parent, now, inc)
  local ik = K.inst(inst)
  -- every record is created with 'cur' (and only ever deleted whole)
  local r = redis.call('HMGET', ik, 'cur', 'ist', 'created', 'parent', 'kv0', 'kvd0')
  if not r[1] then
    if name == '' then return false end
    inc = inc or U.id(redis.call('INCR', K.seq()))
    redis.call('HSET', ik, 'name', name, 'ver', ver, 'cur', eid, 'created', now, 'updated', now, 'inc', inc,
      'kv0', '1', 'kvd0', '1')
    redis.call('ZADD', K.ilist(), now, inst)
    I.unnote(inst)
    r = { eid, false, now, false, '1', '1', created = true }
  else
    local upd = { 'updated', now }
    if name ~= '' then upd[#upd + 1] = 'name'; upd[#upd + 1] = name end
    if ver ~= '' then upd[#upd + 1] = 'ver'; upd[#upd + 1] = ver end
    if U.cmpid(eid, r[1]) > 0 then
      upd[#upd + 1] = 'cur'; upd[#upd + 1] = eid
      r[1], r.moved = eid, true
    end
    redis.call('HSET', ik, unpack(upd))
  end
  if parent ~= '' then
    I.set_parent(inst, parent, r[4], r[3])
    r[4] = parent
  end
  return r
end

-- status_fields returns the field, value pairs that store an execution's
-- status, output and pinned version as the runtime computed them ('' =
-- unchanged), for I.append to write; an output the turn clears is deleted
-- now.
function I.status_fields(ek, status, has_output, output, pinned, now)
  local upd = {}
  local function set(f, v) upd[#upd + 1] = f; upd[#upd + 1] = v end
  if status ~= '' then
    set('st', status)
    if has_output then set('out', output) else redis.call('HDEL', ek, 'out') end
    if I.TERMINAL[status] then set('t1', now) end
  end
  if pinned ~= '' then set('pin', pinned) end
  return upd
end

-- reindex_status files the instance under the status of its current
-- execution, and a terminal root under its completion time; r is its
-- record's cur, ist, created and parent (apply_metadata). status ('' none)
-- is what the turn just stored for execution eid at now: when eid is the
-- current one, the execution record need not be read. known says the
-- execution had events before the turn (I.check_ids), fresh that the turn
-- created it (I.ensure_exec).
function I.reindex_status(inst, r, eid, status, now, known, fresh)
  -- a turn that changed no status of an execution that was already the
  -- current one (known: it had events) leaves a running instance's index
  -- as it was: only turns change an execution's status, each reindexing
  if status == '' and known and r[1] == eid and not r.moved and r[2] and not I.TERMINAL[r[2]] then return end
  local ik = K.inst(inst)
  local e = { status, now }
  if status == '' and fresh and r[1] == eid then
    e = { 'Running', false } -- ensure_exec made it so in this turn
  elseif status == '' or r[1] ~= eid then
    e = redis.call('HMGET', K.exec(inst, r[1]), 'st', 't1')
  end
  local st = e[1] or 'Running'
  if st ~= r[2] then
    if r[2] then redis.call('ZREM', K.istatus(r[2]), inst) end
    redis.call('ZADD', K.istatus(st), r[3], inst)
    redis.call('HSET', ik, 'ist', st)
  end
  if not r[4] then
    if st == 'Completed' or st == 'Failed' then
      redis.call('ZADD', K.iterminal(), e[2] or r[3], inst)
    elseif st ~= r[2] and not r.created then
      -- only a terminal status files a root there: one that stays
      -- non-terminal is not in it (a record made now is not: I.delete
      -- takes an instance out with its record)
      redis.call('ZREM', K.iterminal(), inst)
    end
  end
end

-- set_custom_status applies the last CustomStatusUpdated of a turn: mode '1'
-- sets value, '2' clears; either bumps the version readers poll.
function I.set_custom_status(inst, mode, value)
  local ik = K.inst(inst)
  if mode == '1' then
    redis.call('HSET', ik, 'cs', value)
  elseif mode == '2' then
    redis.call('HDEL', ik, 'cs')
  else
    return
  end
  redis.call('HINCRBY', ik, 'csv', 1)
end

-- delete_orchestrator_queue removes every message of inst and its lock (a
-- holder's ack then fails: nothing it does can recreate the instance).
-- Returns how many messages went.
local function delete_orchestrator_queue(inst)
  local om, oq, ot = K.om(inst), K.oq(inst), K.ot(inst)
  local st = redis.call('HMGET', om, 'st', 'tok', 'tg')
  O.unindex(inst, st[1])
  if st[2] then redis.call('HDEL', K.otoks(), st[2]) end
  local pending = redis.call('ZRANGE', oq, 0, -1)
  for _, seq in ipairs(pending) do redis.call('ZREM', K.ofut(), seq) end
  U.count('o_unl', -#pending)
  local n = #pending + #O.tags(inst, st[3]) / 2
  redis.call('DEL', om, oq, ot)
  return n
end

-- delete_executions removes every execution of inst with its history.
-- Returns executions and events deleted.
local function delete_executions(inst)
  local execs, events = 0, 0
  for _, eid in ipairs(redis.call('ZRANGE', K.execs(inst), 0, -1)) do
    local e, n = I.delete_execution(inst, eid)
    execs, events = execs + e, events + n
  end
  redis.call('DEL', K.execs(inst))
  return execs, events
end

-- delete_execution removes one execution and its history (UNLINK: a long
-- history is freed off the main thread). Returns 1 and its event count.
function I.delete_execution(inst, eid)
  local hk = K.history(inst, eid)
  local n = redis.call('LLEN', hk)
  redis.call('UNLINK', hk)
  redis.call('DEL', K.exec(inst, eid))
  redis.call('ZREM', K.execs(inst), eid)
  U.count('executions', -1)
  U.count('events', -n)
  return 1, n
end

-- unnote removes the pending-start note of inst and its index entry: the
-- instance was created (its start ran, or was poisoned) or deleted.
function I.unnote(inst)
  redis.call('DEL', K.pending(inst))
  redis.call('ZREM', K.ipending(), inst)
end

-- pending_note reads the pending-start note of inst: {orchestration,
-- version, attempt, max attempts, reason, noted at}, or false.
function I.pending_note(inst)
  local r = redis.call('HMGET', K.pending(inst), 'name', 'ver', 'att', 'max', 'why', 'at')
  if not r[1] then return false end
  return r
end

-- delete removes everything stored for inst: record and indexes, executions
-- and history, orchestrator messages and lock, worker items in any state
-- (with their session references), KV store and delta. Returns whether a
-- record existed, executions, events and queue messages deleted.
function I.delete(inst, now)
  local ik = K.inst(inst)
  local r = redis.call('HMGET', ik, 'parent', 'ist', 'name')
  local existed = redis.call('EXISTS', ik) == 1
  if r[1] then redis.call('ZREM', K.ichildren(r[1]), inst) end
  if r[2] then redis.call('ZREM', K.istatus(r[2]), inst) end
  redis.call('ZREM', K.ilist(), inst)
  redis.call('ZREM', K.iterminal(), inst)
  local execs, events = delete_executions(inst)
  local msgs = delete_orchestrator_queue(inst)
  local wa = K.wact(inst)
  for _, m in ipairs(redis.call('ZRANGE', wa, 0, -1)) do
    local parts = U.split(m, ':')
    msgs = msgs + W.delete(W.fields(parts[3]), now)
  end
  redis.call('DEL', wa, ik, K.ichildren(inst), K.kv(inst), K.kvdelta(inst))
  I.unnote(inst)
  -- a deleted instance frees its slot of its name's limit
  if r[3] then O.leave(inst, r[3], now) end
  local n = 0
  if existed then n = 1 end
  return n, execs, events, msgs
end

-- tree lists root and its descendants, breadth first, each once: parent
-- links come from callers' acks, and a non-root may sit on a cycle.
function I.tree(root)
  local ids, seen, i = { root }, { [root] = true }, 1
  while ids[i] do
    for _, child in ipairs(redis.call('ZRANGE', K.ichildren(ids[i]), 0, -1)) do
      if not seen[child] then
        seen[child] = true
        ids[#ids + 1] = child
      end
    end
    i = i + 1
  end
  return ids
end

-- delete_set deletes the instances ids, all or nothing. It refuses (nil and
-- the error reply, nothing changed) when, without force, one of them is
-- Running, or when a child of one of them is not in the set (it would be
-- orphaned).
-- Returns {instances, executions, events, queue messages} deleted.
function I.delete_set(ids, force, now)
  local set = {}
  for _, id in ipairs(ids) do set[id] = true end
  for _, inst in ipairs(ids) do
    if not force and redis.call('HGET', K.inst(inst), 'ist') == 'Running' then
      return nil, U.fail('CONFLICT', 'instance ' .. inst .. ' is Running; delete it with force or wait until it ends; nothing was deleted')
    end
    for _, child in ipairs(redis.call('ZRANGE', K.ichildren(inst), 0, -1)) do
      if not set[child] then
        return nil, U.fail('CONFLICT', 'child ' .. child .. ' of instance ' .. inst ..
          ' is not in the deletion set and would be orphaned; nothing was deleted')
      end
    end
  end
  local total = { 0, 0, 0, 0 }
  for _, inst in ipairs(ids) do
    local a, b, c, d = I.delete(inst, now)
    total[1], total[2], total[3], total[4] = total[1] + a, total[2] + b, total[3] + c, total[4] + d
  end
  return total
end
