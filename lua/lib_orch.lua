-- lib_orch: the orchestrator queue.
--
-- Messages of an instance live in oq (untagged, scored by visibility) until a
-- lock tags them: then the lock's field 'tg' of the om hash lists them with
-- their visibility ('seq:vis,...'), read with the lock and deleted with it.
-- om also holds their bodies and attempt counts, the lock ('tok', 'until')
-- and the index state 'st' of the instance:
--   'r<version>' ready: in the ready partition of that pinned version
--   'd'          delayed: in odelay, every message is in the future
--   's<version>' offered to its sticky owner alone (lib_stky.lua)
--   'p<version>' ready as 'r', and still preferred by its sticky owner
--   'l'          locked: in olocked
--   'z'          held: its instance is paused (record field 'pz') or its
--                orchestration name is (flow field 'z:<name>', listed in
--                K.nheld(name)), or, new, it waits for a slot of its
--                name's limit (listed in K.oheld(name)); in no index,
--                so no fetch sees it;
--                messages keep arriving and resuming files it again
--                (O.reindex)
--   absent       no pending message
-- Ready partitions are keyed by the pinned version of the instance's current
-- execution, so a fetch with a capability filter looks only at compatible
-- partitions and never walks over instances it cannot take.

-- Work found by one call of maintenance is bounded so that a burst of expired
-- locks or due timers never blocks Redis; the next fetch continues.
O.MAINTAIN_BATCH = 100
-- A capability filter stays registered for arming this long after a fetcher
-- last used it.
O.FILTER_TTL = 600000

-- vparse splits a canonical version 'maj.min.patch[-pre]' into its parts.
local function vparse(v)
  local a, b, c, rest = string.match(v, '^(%d+)%.(%d+)%.(%d+)(.*)$')
  if not a then return nil end
  if string.sub(rest, 1, 1) == '-' then rest = string.sub(rest, 2) end
  return { a, b, c, rest }
end

-- prepart compares two prerelease identifiers as semver orders them: numeric
-- ones numerically and below alphanumeric ones, those in ASCII order.
local function prepart(a, b)
  if a == b then return 0 end
  local an, bn = string.match(a, '^%d+$'), string.match(b, '^%d+$')
  if an and bn then return U.cmpid(a, b) end
  if an then return -1 end
  if bn then return 1 end
  if a < b then return -1 end
  return 1
end

-- vcmp compares two parsed versions with the precedence of semver (and of
-- github.com/Masterminds/semver, which the Go side uses).
function O.vcmp(x, y)
  for i = 1, 3 do
    local c = U.cmpid(x[i], y[i])
    if c ~= 0 then return c end
  end
  local p, q = x[4], y[4]
  if p == q then return 0 end
  if p == '' then return 1 end
  if q == '' then return -1 end
  local ps, qs = U.split(p, '.'), U.split(q, '.')
  for i = 1, math.max(#ps, #qs) do
    if ps[i] == nil then return -1 end
    if qs[i] == nil then return 1 end
    local c = prepart(ps[i], qs[i])
    if c ~= 0 then return c end
  end
  return 0
end

-- compatible reports whether an execution pinned at ver ('' = unpinned) may be
-- handed to a fetcher whose filter is enc: '*' (no filter), '' (no range:
-- matches nothing) or 'min,max;min,max' (inclusive, '' = unbounded side).
function O.compatible(ver, enc)
  if enc == '*' then return true end
  if enc == '' then return false end
  if ver == '' then return true end
  local v = vparse(ver)
  if not v then return false end
  for _, range in ipairs(U.split(enc, ';')) do
    local b = U.split(range, ',')
    local lo, hi = b[1], b[2] or ''
    if (lo == '' or O.vcmp(v, vparse(lo)) >= 0) and (hi == '' or O.vcmp(v, vparse(hi)) <= 0) then
      return true
    end
  end
  return false
end

-- RECORD lists the fields of an instance record a fetch reads: name, ver,
-- cur, inc, created, and kv0 ('1' while the KV store is known empty).
O.RECORD = { 'name', 'ver', 'cur', 'inc', 'created', 'kv0' }

-- partition is the pinned version of the instance's current execution, the
-- ready partition it belongs to ('' when unpinned or unknown), and whether
-- the instance is paused: the flag rides on the record read that finds the
-- execution, so filing an instance costs no command more for it. The third
-- result is what O.take reads of the record (O.RECORD) and of the execution
-- (field max: its max, false without one), read with the same two commands:
-- a take of the instance kept aside (U.keep) reads neither again. norec says
-- the caller saw that the instance has no record: nothing is read.
function O.partition(inst, norec)
  if norec then return '', false, { false, false, false, false, false, false, max = false } end
  local r = redis.call('HMGET', K.inst(inst), 'pz', unpack(O.RECORD))
  local paused = r[1] ~= false
  local rec = { unpack(r, 2) }
  rec.max = false
  if not rec[3] then return '', paused, rec end
  local e = redis.call('HMGET', K.exec(inst, rec[3]), 'pin', 'max')
  rec.max = e[2]
  return e[1] or '', paused, rec
end

-- filters calls fn(filter id) for every registered filter compatible with ver.
local function each_filter(ver, fn)
  local f = U.memo('ofilters', function() return redis.call('HGETALL', K.ofilters()) end)
  for i = 1, #f, 2 do
    if O.compatible(ver, f[i + 1]) then fn(f[i]) end
  end
end

-- arm_ready wakes the fetchers that can take an instance of partition ver.
function O.arm_ready(ver)
  each_filter(ver, function(fid) U.ready(K.owake(fid)) end)
end

-- register keeps a blocked fetcher's filter known to the arming functions and
-- forgets filters nobody has used for FILTER_TTL. A filter seen within the
-- last tenth of that is left as it is: fid is a hash of enc, so the entry
-- cannot have changed, and one ZSCORE replaces three writes and a range read
-- on every idle fetch.
function O.register(fid, enc, now)
  local seen = redis.call('ZSCORE', K.ofseen(), fid)
  if seen and tonumber(seen) > now - O.FILTER_TTL / 10 then return end
  U.forget('ofilters')
  redis.call('HSET', K.ofilters(), fid, enc)
  redis.call('ZADD', K.ofseen(), now, fid)
  local stale = redis.call('ZRANGEBYSCORE', K.ofseen(), '-inf', now - O.FILTER_TTL, 'LIMIT', 0, 10)
  for _, old in ipairs(stale) do
    redis.call('HDEL', K.ofilters(), old)
    redis.call('ZREM', K.ofseen(), old)
  end
end

-- unindex removes an instance from the index its state st names. Leaving a
-- pinned version's ready partition, it returns whether instances are left
-- in it (else nil: not read).
function O.unindex(inst, st)
  if not st then return end
  local c = string.sub(st, 1, 1)
  if c == 'r' or c == 'p' then
    if c == 'p' then T.withdraw(inst) end
    local ver = string.sub(st, 2)
    local rk = K.oready(ver)
    redis.call('ZREM', rk, inst)
    if ver == '' then return end
    local left = redis.call('EXISTS', rk) == 1
    if not left then redis.call('HDEL', K.overs(), ver) end
    return left
  elseif c == 'd' then
    redis.call('ZREM', K.odelay(), inst)
  elseif c == 'l' then
    redis.call('ZREM', K.olocked(), inst)
  elseif c == 's' then
    T.withdraw(inst)
  end
end

-- file_ready puts an unlocked instance into the ready partition ver at
-- position order, in state st, and wakes the partition's fetchers. extra
-- (optional) holds more field, value pairs of om to write with its state: a
-- new message's body costs no HSET of its own.
function O.file_ready(inst, ver, order, st, extra)
  redis.call('ZADD', K.oready(ver), U.id(order), inst)
  if ver ~= '' then redis.call('HSET', K.overs(), ver, '1') end
  redis.call('HSET', K.om(inst), 'st', st, unpack(extra or {}))
  O.arm_ready(ver)
end

-- A script that fetches right after an ack (the ack_fetch scripts) keeps
-- aside the first instance the ack makes ready for everyone (U.keep): it is
-- filed nowhere and nobody is woken for it, but the fetch considers it with
-- the ready partitions (O.pick) and takes it when it is the oldest, as it
-- usually is (the instance a turn just released, the one an activity's
-- completion readied). That saves filing it, waking for it and taking it
-- out again. O.flush files it, as make_ready would have, when the fetch
-- took something else; both scripts call it before they return. The kept
-- entry (U.kept('o')) holds inst, ver, order and vis as make_ready got them
-- and rec as O.partition read it.

-- kept_state returns the index state inst has while kept aside ('r' and
-- its partition, as once filed), or nil.
local function kept_state(inst)
  local k = U.kept('o')
  if k and k.inst == inst then return 'r' .. k.ver end
end

-- is_kept reports whether inst is the instance kept aside.
function O.is_kept(inst)
  return kept_state(inst) ~= nil
end

-- flush files the instance kept aside, if the fetch did not take it: it
-- is offered to its sticky owner when it was kept for that owner's fetch.
function O.flush(now)
  local k = U.unkeep('o')
  if not k then return end
  if k.sk and T.offer(k.inst, k.ver, k.order, nil, now, k.sk) then return end
  O.file_ready(k.inst, k.ver, k.order, 'r' .. k.ver)
end

-- START and QUEUED open the JSON of a StartOrchestration and a QueueMessage
-- (duroxide's wire format: the variant's name is the object's only key).
local START = '{"StartOrchestration":'
local QUEUED = '{"QueueMessage":'

-- start_name returns the orchestration name of a StartOrchestration's
-- json, or false: what names an instance without record. Decoded only in a
-- namespace with flow settings.
local function start_name(json)
  if not json or string.sub(json, 1, #START) ~= START or not U.flowing() then return false end
  local ok, v = pcall(cjson.decode, json)
  if not ok or type(v) ~= 'table' or type(v.StartOrchestration) ~= 'table' then return false end
  local name = v.StartOrchestration.orchestration
  if type(name) ~= 'string' then return false end
  return name
end

-- flow returns the priority of orchestration name (0: none) and whether
-- the name is paused (false name: unknown, neither). It reads the name's
-- limit on running instances with them (O.olimit), in one HMGET.
function O.flow(name)
  if not name then return 0, false end
  U.flow_fields({ 'po:' .. name, 'z:' .. name, 'lo:' .. name })
  return tonumber(U.flow('po:' .. name)) or 0, U.flow('z:' .. name) ~= false
end

-- hold holds inst, in no index (state 'z'), listed in the ZSET list at
-- score (an earlier listing keeps its score) for what files it again
-- (O.reindex): the resume of its paused name, or a slot of its name's
-- limit that frees (O.admit_held). extra as for O.file_ready.
local function hold(list, inst, score, extra)
  redis.call('ZADD', list, 'NX', U.id(score), inst)
  redis.call('HSET', K.om(inst), 'st', 'z', unpack(extra or {}))
end

-- hold_by_name holds inst because its orchestration name is paused.
local function hold_by_name(inst, name, now, extra)
  hold(K.nheld(name), inst, now, extra)
end

-- Limits on running instances per orchestration name (docs/flow-control.md):
-- the flow field 'lo:<name>' is the partition's share c of the name's
-- limit. A new instance (a start for an instance without record) is
-- admitted when it is filed ready (make_ready) or, filed before, when a
-- fetch picks it (O.take): it takes a slot, membership in K.orun(name),
-- when fewer than c hold one, else it is held (state 'z', listed in
-- K.oheld(name) by its start's seq). A slot is kept through every turn and
-- continue-as-new (its om field ol names the name, read with the lock), and
-- given back when the instance ends (Completed or Failed: O.commit) or is
-- deleted (I.delete): then the oldest held
-- instance takes it and is filed (O.admit_held). Instances with a record
-- are never admitted again, so those started before the limit are not
-- counted. A namespace without flow settings reads nothing for this, and an
-- ack of an instance without a slot neither.

-- olimit returns the limit on running instances of orchestration name (its
-- partition's share), or nil.
function O.olimit(name)
  if not name then return nil end
  return tonumber(U.flow('lo:' .. name))
end

-- admit reports whether the new instance inst of orchestration name may run:
-- it holds a slot of the name's limit, or takes a free one, or the name has
-- no limit. Else it holds inst until a slot frees, listed by order (the seq
-- of its start), noting when (now); extra as for O.file_ready.
function O.admit(inst, name, order, now, extra)
  local c = O.olimit(name)
  if not c then return true end
  local rk = K.orun(name)
  if redis.call('SISMEMBER', rk, inst) == 1 then return true end
  if redis.call('SCARD', rk) < c then
    O.slot(inst, name)
    return true
  end
  -- what get_pending_start says of it: held since when, by which limit
  local fields = { 'lh', U.id(now) .. ' ' .. name }
  for _, v in ipairs(extra or {}) do fields[#fields + 1] = v end
  hold(K.oheld(name), inst, order, fields)
  return false
end

-- held_by returns the orchestration name whose limit holds inst and since
-- when (ms), or nil.
function O.held_by(inst)
  local v = redis.call('HGET', K.om(inst), 'lh')
  if not v then return nil end
  local at, name = string.match(v, '^(%d+) (.*)$')
  if not at or not redis.call('ZSCORE', K.oheld(name), inst) then return nil end
  return name, at
end

-- slot gives inst a slot of orchestration name's limit, marked in its om
-- (field ol), which its ack reads with its lock: an ack of an instance
-- without one reads nothing more.
function O.slot(inst, name)
  redis.call('SADD', K.orun(name), inst)
  redis.call('HSET', K.om(inst), 'ol', name)
  redis.call('HDEL', K.om(inst), 'lh')
end

-- admit_held files instances held by the limit of orchestration name,
-- oldest start first, each taking a slot, while fewer than c hold one (c
-- nil: the limit is gone, every held instance goes without a slot), at
-- most batch. A listed instance with nothing left to run (deleted) gives
-- its slot back at once. Returns how many are still held.
function O.admit_held(name, c, now, batch)
  local rk, hk = K.orun(name), K.oheld(name)
  for _ = 1, batch do
    if c and redis.call('SCARD', rk) >= c then break end
    local first = redis.call('ZRANGE', hk, 0, 0)[1]
    if not first then break end
    redis.call('ZREM', hk, first)
    if c then O.slot(first, name) end
    if not O.reindex(first, now) and c then redis.call('SREM', rk, first) end
  end
  return redis.call('ZCARD', hk)
end

-- leave gives back the slot inst held of its orchestration name's limit,
-- when it held one, and lets the oldest held instance take it. Without
-- flow settings it reads nothing.
function O.leave(inst, name, now)
  local c = O.olimit(name)
  if not c then return end
  if redis.call('SREM', K.orun(name), inst) == 0 then return end
  O.admit_held(name, c, now, 1)
end

-- make_ready makes an unlocked instance fetchable at position order (the
-- seq of its oldest visible message, shifted by its orchestration name's
-- priority: U.shift): offered to its sticky owner first
-- when it has one, else ready in the partition of its pinned version (or
-- kept aside, see U.keep). Optional, in opt: extra as for O.file_ready;
-- vis, the visible messages as O.take reads them, which a take of the kept
-- instance then uses; norec, the caller saw the instance has no record
-- (O.partition); sk, the sticky record as the caller read it (T.offer);
-- start, the json of a start that names an instance without record.
local function make_ready(inst, order, now, opt)
  local extra = opt.extra
  local ver, paused, rec = O.partition(inst, opt.norec)
  if paused then
    -- held: indexed nowhere and nobody woken; resuming files it again
    redis.call('HSET', K.om(inst), 'st', 'z', unpack(extra or {}))
    return
  end
  local name = rec[1] or start_name(opt.start)
  local prio, held = O.flow(name)
  if held then return hold_by_name(inst, name, now, extra) end
  -- a new instance takes a slot of its name's limit, or waits for one
  if opt.start and name and not O.admit(inst, name, order, now, extra) then return end
  order = U.shift(order, prio)
  local sk = opt.sk
  if sk == nil then sk = redis.call('HGET', K.om(inst), 'sk') or false end
  -- sticky to the owner whose fetch it would be kept for: kept, not offered
  -- (an offer's indexes and wake-up marker, taken straight back out)
  local mine = T.mine(sk, U.keeper('o'), now)
  if not mine and T.offer(inst, ver, order, extra, now, sk) then return end
  local entry = { inst = inst, ver = ver, order = tonumber(order), rec = rec, vis = opt.vis }
  if mine then entry.sk = sk end
  if U.put_aside('o', entry) then
    if extra then redis.call('HSET', K.om(inst), unpack(extra)) end
    return
  end
  if mine and T.offer(inst, ver, order, extra, now, sk) then return end
  O.file_ready(inst, ver, order, 'r' .. ver, extra)
end

-- make_delayed parks an unlocked instance whose messages are all in the
-- future; extra as for make_ready.
local function make_delayed(inst, at, now, extra)
  U.schedule(K.ogate(), K.odelay(), at, inst)
  redis.call('HSET', K.om(inst), 'st', 'd', unpack(extra or {}))
end

-- file_instance indexes an unlocked instance that is in no index and has no
-- state: ready when a message is visible, delayed when all are in the
-- future, nowhere when it has none (one read). Its cost is the number of visible
-- messages, which the next fetch takes anyway. Returns whether it filed it.
local function file_instance(inst, now)
  local oq = K.oq(inst)
  local first = redis.call('ZRANGE', oq, 0, 0, 'WITHSCORES')
  if #first == 0 then return false end
  local at = tonumber(first[2])
  if at > now then
    make_delayed(inst, at, now)
    return true
  end
  local vis = redis.call('ZRANGEBYSCORE', oq, '-inf', now, 'WITHSCORES')
  local order = tonumber(vis[1])
  for i = 3, #vis, 2 do
    local n = tonumber(vis[i])
    if n < order then order = n end
  end
  make_ready(inst, order, now, { vis = vis })
  return true
end

-- reindex files an unlocked instance where its pending messages say it
-- belongs, whatever index it is in now. Returns whether it has any (or is
-- locked).
function O.reindex(inst, now)
  local om = K.om(inst)
  local st = redis.call('HGET', om, 'st')
  if st == 'l' then return true end
  O.unindex(inst, st)
  if file_instance(inst, now) then return true end
  if st then redis.call('HDEL', om, 'st') end
  return false
end

-- enqueue adds a message for inst, visible at vis. A locked instance is not
-- indexed: releasing its lock does that; a held (paused) one neither:
-- resuming does. A start for an instance without a
-- record marks it 'ps' (start waiting) until the record is made, so that a
-- checked enqueue knows of it (I.known).
function O.enqueue(inst, json, vis, now)
  local seq = U.id(redis.call('INCR', K.seq()))
  local om = K.om(inst)
  local st, sk = kept_state(inst), nil
  if st then
    U.kept('o').vis = nil -- one more message: the take reads them
  else
    local r = redis.call('HMGET', om, 'st', 'sk')
    st, sk = r[1], r[2]
  end
  -- the body goes with the new state when the instance gets one
  local body = { 'm' .. seq, json }
  local norec = string.sub(json, 1, #START) == START and redis.call('EXISTS', K.inst(inst)) == 0
  if norec then
    body[3], body[4] = 'ps', '1'
  end
  redis.call('ZADD', K.oq(inst), U.id(vis), seq)
  U.count('o_unl', 1)
  if vis > now then U.schedule(K.ogate(), K.ofut(), vis, seq) end
  local c = st and string.sub(st, 1, 1)
  if c ~= 'l' and c ~= 'r' and c ~= 's' and c ~= 'p' and c ~= 'z' then
    if vis <= now then
      O.unindex(inst, st)
      return make_ready(inst, tonumber(seq), now, { extra = body, norec = norec, sk = sk, start = norec and json })
    end
    if not st or vis < tonumber(redis.call('ZSCORE', K.odelay(), inst)) then
      return make_delayed(inst, vis, now, body)
    end
  end
  redis.call('HSET', om, unpack(body))
end

-- tags returns the messages a lock tagged as seq, visible-at pairs, from its
-- om field tg (false: none there). A lock taken by a version that kept them
-- in the ZSET ot has no tg: they are read from ot, deleted when drop says the
-- caller consumes them, so an upgrade in the middle of a turn loses no
-- message.
function O.tags(inst, tg, drop)
  local out = {}
  if tg then
    for seq, vis in string.gmatch(tg, '([^:,]+):([^,]+)') do
      out[#out + 1] = seq
      out[#out + 1] = vis
    end
    return out
  end
  local ot = K.ot(inst)
  out = redis.call('ZRANGE', ot, 0, -1, 'WITHSCORES')
  if drop and #out > 0 then redis.call('DEL', ot) end
  return out
end

-- untag returns the messages tagged by the instance's lock (tg: its om
-- field) to the pending set. delay > 0 makes them visible at now + delay
-- (else they keep their time); ignore undoes the attempt the fetch counted.
function O.untag(inst, tg, now, delay, ignore)
  local oq, om = K.oq(inst), K.om(inst)
  local tagged = O.tags(inst, tg, true)
  for i = 1, #tagged, 2 do
    local seq, vis = tagged[i], tonumber(tagged[i + 1])
    if delay > 0 then vis = now + delay end
    redis.call('ZADD', oq, vis, seq)
    if vis > now then U.schedule(K.ogate(), K.ofut(), vis, seq) end
    if ignore then
      local a = tonumber(redis.call('HGET', om, 'a' .. seq) or '0')
      if a > 0 then redis.call('HSET', om, 'a' .. seq, a - 1) end
    end
  end
  U.count('o_unl', #tagged / 2)
end

-- drop_tagged deletes the messages tagged by the instance's lock (tg: its
-- om field) at its ack: it returns their om fields, which O.release deletes
-- with the lock's.
function O.drop_tagged(inst, tg)
  local tagged, fields = O.tags(inst, tg, true), {}
  for i = 1, #tagged, 2 do
    fields[#fields + 1] = 'm' .. tagged[i]
    fields[#fields + 1] = 'a' .. tagged[i]
  end
  return fields
end

-- release removes the instance lock (and the om fields gone, if given), with
-- the incarnation a lazy fetch gave an instance without record (see
-- incarnation), and files the instance by what is left.
function O.release(inst, tok, now, gone)
  local fields = gone or {}
  local n = #fields
  fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4], fields[n + 5] = 'tok', 'until', 'st', 'inc', 'tg'
  U.chunked('HDEL', K.om(inst), fields)
  if tok then redis.call('HDEL', K.otoks(), tok) end
  redis.call('ZREM', K.olocked(), inst)
  file_instance(inst, now)
end

-- abandon releases the lock token names without committing: the messages
-- of the fetched batch become visible again (after delay ms when delay > 0),
-- later arrivals are untouched, ignore undoes the attempt the fetch counted.
-- Returns the instance, or false and the error reply for an unknown token.
function O.abandon(token, delay, ignore, now)
  local inst, _, tok, tg = O.lock_of(token)
  if not inst then
    return false, U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid')
  end
  O.untag(inst, tg, now, delay, ignore)
  O.release(inst, tok, now)
  return inst
end

-- A fetch locks an instance with the caller's token (stored in om and, for
-- the give-back of a fetch whose reply was lost, mapped to the instance in
-- otoks) and hands out that token, ':' and the instance: ack, renew and
-- abandon then find the instance without reading otoks.
local function handed_out(tok, inst)
  return tok .. ':' .. inst
end

-- lock_of returns the instance, lock expiry, stored token, tagged messages
-- (om field tg) and the incarnation a lazy fetch gave an instance without
-- record (om field inc, see incarnation) of a token (handed out, or the
-- caller's own), and the orchestration name whose limit's slot the
-- instance holds (om field ol, see O.admit; false: none), or nil when the
-- token is unknown or no longer the instance's lock.
function O.lock_of(token)
  local tok, inst = string.match(token, '^([^:]*):(.+)$')
  if not tok then
    tok, inst = token, redis.call('HGET', K.otoks(), token)
    if not inst then return nil end
  end
  local l = redis.call('HMGET', K.om(inst), 'tok', 'until', 'tg', 'inc', 'ol')
  if l[1] ~= tok then return nil end
  return inst, tonumber(l[2]), tok, l[3], l[4], l[5]
end

-- expire releases a lock whose holder ran out of time; its messages are
-- offered again (and counted again by the next fetch).
function O.expire(inst, now)
  local l = redis.call('HMGET', K.om(inst), 'tok', 'tg')
  O.untag(inst, l[2], now, 0, false)
  O.release(inst, l[1], now)
end

-- maintain applies what time has made due: expired locks, delayed
-- instances and ended sticky offers, a bounded number per call. The gate
-- K.ogate() bounds the earliest score of olocked, odelay, ofut and owait
-- (every insert into them goes through U.schedule), so before it there is
-- nothing due and no set is read.
function O.maintain(now)
  if U.gate(K.ogate()) > now then return end
  local n = O.MAINTAIN_BATCH
  for _, inst in ipairs(redis.call('ZRANGEBYSCORE', K.olocked(), '-inf', now, 'LIMIT', 0, n)) do
    O.expire(inst, now)
  end
  for _, inst in ipairs(redis.call('ZRANGEBYSCORE', K.odelay(), '-inf', now, 'LIMIT', 0, n)) do
    O.reindex(inst, now)
  end
  for _, inst in ipairs(redis.call('ZRANGEBYSCORE', K.owait(), '-inf', now, 'LIMIT', 0, n)) do
    T.publish(inst)
  end
  redis.call('ZREMRANGEBYSCORE', K.ofut(), '-inf', now)
  U.settle(K.ogate(), { K.olocked(), K.odelay(), K.ofut(), K.owait() })
end

-- expired_count counts, without releasing them, the messages held by locks
-- that expired: O.maintain would offer them again. Like maintain it reads at
-- most MAINTAIN_BATCH locks (the rest are counted once a fetch has released
-- those), and nothing when the gate says no lock has expired.
function O.expired_count(now)
  if U.gate(K.ogate()) > now then return 0 end
  local n = 0
  for _, inst in ipairs(redis.call('ZRANGEBYSCORE', K.olocked(), '-inf', now, 'LIMIT', 0, O.MAINTAIN_BATCH)) do
    n = n + #O.tags(inst, redis.call('HGET', K.om(inst), 'tg')) / 2
  end
  return n
end

-- idle records that a fetcher with filter fid (encoding enc) has nothing
-- more to take and returns when it must run again.
function O.idle(fid, enc, now)
  O.register(fid, enc, now)
  return U.idle(K.owake(fid), now)
end

-- pick returns the ready instance with the oldest visible message among the
-- partitions compatible with filter enc, its partition, how many of those
-- partitions have an instance ready, and its order.
function O.pick(enc)
  local best, bestver, bestorder
  local ready = 0
  local function offer(inst, ver, order)
    ready = ready + 1
    if not bestorder or order < bestorder then best, bestver, bestorder = inst, ver, order end
  end
  local function consider(ver)
    local r = redis.call('ZRANGE', K.oready(ver), 0, 0, 'WITHSCORES')
    if r[1] then offer(r[1], ver, tonumber(r[2])) end
  end
  if enc ~= '' then consider('') end
  for _, ver in ipairs(redis.call('HKEYS', K.overs())) do
    if O.compatible(ver, enc) then consider(ver) end
  end
  -- the kept instance counts as one more ready partition (see O.take)
  local k = U.kept('o')
  if k and ((k.ver == '' and enc ~= '') or (k.ver ~= '' and O.compatible(k.ver, enc))) then
    offer(k.inst, k.ver, k.order)
  end
  return best, bestver, ready, bestorder
end

-- more tells whether filter enc has work left after a take from partition
-- ver, when pick saw ready partitions: a take touches no other partition,
-- so only its own must be read again, unless the take did (left).
local function more(ver, ready, left)
  if ready > 1 then return true end
  if left == nil then left = redis.call('EXISTS', K.oready(ver)) == 1 end
  return left
end

-- messages reads the messages seqs of inst and their attempt counts in one
-- HMGET: seq -> json (false when missing), seq -> attempts so far.
local function messages(inst, seqs)
  local fields = {}
  for i, seq in ipairs(seqs) do fields[2 * i - 1], fields[2 * i] = 'm' .. seq, 'a' .. seq end
  local got, body, tries = U.chunked('HMGET', K.om(inst), fields), {}, {}
  for i, seq in ipairs(seqs) do
    body[seq], tries[seq] = got[2 * i - 1], tonumber(got[2 * i] or '0')
  end
  return body, tries
end

-- drop_orphans deletes QueueMessages sent to an instance that has no history
-- and no StartOrchestration among seqs (body: their json): nothing will ever
-- consume them. Returns the seqs that remain and how many were dropped.
local function drop_orphans(inst, seqs, body, has_history)
  if has_history then return seqs, 0 end
  for _, seq in ipairs(seqs) do
    if string.sub(body[seq] or '', 1, #START) == START then return seqs, 0 end
  end
  local om = K.om(inst)
  local keep, dropped = {}, 0
  for _, seq in ipairs(seqs) do
    if string.sub(body[seq] or '', 1, #QUEUED) == QUEUED then
      redis.call('ZREM', K.oq(inst), seq)
      redis.call('HDEL', om, 'm' .. seq, 'a' .. seq)
      dropped = dropped + 1
    else
      keep[#keep + 1] = seq
    end
  end
  U.count('o_unl', -dropped)
  return keep, dropped
end

-- tag moves every visible message of inst, seqs (at: their visibility), to
-- the lock's om field tg, counts an attempt on each (tries: the counts so
-- far, read with the bodies) and returns the highest. lock holds the lock's
-- om fields, written with the counts and tg in one HSET.
local function tag(inst, seqs, at, tries, lock, now)
  redis.call('ZREMRANGEBYSCORE', K.oq(inst), '-inf', now)
  local tagged, counts, attempts = {}, {}, 0
  for i, seq in ipairs(seqs) do
    tagged[i] = seq .. ':' .. at[seq]
    local a = tries[seq] + 1
    counts[2 * i - 1], counts[2 * i] = 'a' .. seq, U.id(a)
    if a > attempts then attempts = a end
  end
  for _, v in ipairs(lock) do counts[#counts + 1] = v end
  counts[#counts + 1] = 'tg'
  counts[#counts + 1] = table.concat(tagged, ',')
  U.chunked('HSET', K.om(inst), counts)
  U.count('o_unl', -#seqs)
  return attempts
end

-- history_of returns what a fetch hands out of the history of execution eid
-- of inst, and whether that execution has events: every event, or, for a
-- lazy fetch, its cursor's first part, the last event id ('0': none), read
-- from the execution record in O(1) whatever the history's length (max:
-- that field, when the caller read it already; nil: read it).
local function history_of(inst, eid, lazy, max)
  local hk = K.history(inst, eid)
  if not lazy then
    local h = redis.call('LRANGE', hk, 0, -1)
    return h, #h > 0
  end
  if max == nil then max = redis.call('HGET', K.exec(inst, eid), 'max') end
  -- every append sets max; LLEN (O(1)) covers entries stored without it
  return { max or '0' }, max ~= false or redis.call('LLEN', hk) > 0
end

-- incarnation completes a lazy fetch's cursor c (history_of) of inst, whose
-- record's 'inc' and 'created' are inc and created (false: no record): the
-- record's incarnation, or, for a record written before incarnations,
-- 't' and its creation time. An instance without a record gets a new one
-- from the namespace's sequence, added to its lock's om fields (lock): the
-- ack that creates the record keeps it (I.apply_metadata), so the cursor of
-- the next turn matches; a release deletes it. Without a record the first
-- event (eid: the execution read) is added too, from which the item's name
-- and version are taken when no StartOrchestration is among its messages.
local function incarnation(inst, eid, c, inc, created, has_history, lock)
  if inc then
    c[2] = inc
  elseif created then
    c[2] = 't' .. created
  else
    c[2] = U.id(redis.call('INCR', K.seq()))
    lock[#lock + 1] = 'inc'
    lock[#lock + 1] = c[2]
    if has_history then c[3] = redis.call('LINDEX', K.history(inst, eid), 0) end
  end
end

-- take locks inst (ready in partition ver) for token, tags its visible
-- messages and returns the fetch reply; nil when only orphan QueueMessages
-- were visible (they are dropped), or when its orchestration name is paused
-- (it is held: filed before the pause). dropped collects {inst, count} for logging.
-- Its second result says whether partition ver still has instances ready
-- (nil: not read). lazy puts the history's cursor where the events go
-- (history_of, incarnation).
function O.take(inst, ver, token, lock_ms, now, dropped, lazy)
  local left, rec, max, vis
  local k = U.kept('o')
  if k and k.inst == inst then
    -- in no index (pick counted it as a partition of its own, now empty),
    -- and its record, execution and messages were read when it was kept
    U.drop_aside('o')
    left, rec, vis = false, k.rec, k.vis
    if rec[3] then max = rec.max end
  else
    left = O.unindex(inst, 'r' .. ver)
    rec = redis.call('HMGET', K.inst(inst), unpack(O.RECORD))
  end
  -- filed before its orchestration name was paused: held now
  if select(2, O.flow(rec[1])) then
    hold_by_name(inst, rec[1], now)
    return nil, left
  end
  local om = K.om(inst)
  -- without a record, the latest execution, as Read sees it; without one
  -- either, no history (every execution with events is indexed)
  local cur = rec[3] or I.latest(inst)
  local history, has_history = {}, false
  if cur then
    history, has_history = history_of(inst, cur, lazy, max)
  elseif lazy then
    history = { '0' }
  end
  vis = vis or redis.call('ZRANGEBYSCORE', K.oq(inst), '-inf', now, 'WITHSCORES')
  local seqs, at = {}, {}
  for i = 1, #vis, 2 do
    seqs[#seqs + 1] = vis[i]
    at[vis[i]] = vis[i + 1]
  end
  local body, tries = messages(inst, seqs)
  if not rec[1] and U.flowing() then
    -- no record: the start among its messages names it
    for _, seq in ipairs(seqs) do
      local name = start_name(body[seq])
      if name then
        if select(2, O.flow(name)) then
          hold_by_name(inst, name, now)
          return nil, left
        end
        -- filed before its name had a limit, or filed again by the
        -- resume of its paused name: admitted now
        if not O.admit(inst, name, seq, now) then return nil, left end
        break
      end
    end
  end
  local n
  seqs, n = drop_orphans(inst, seqs, body, has_history)
  if n > 0 then
    dropped[#dropped + 1] = inst
    dropped[#dropped + 1] = U.id(n)
  end
  if #seqs == 0 then
    redis.call('HDEL', om, 'st')
    file_instance(inst, now)
    return nil
  end
  table.sort(seqs, function(a, b) return tonumber(a) < tonumber(b) end)
  -- every visible message is tagged now (orphans were deleted)
  local untl = now + lock_ms
  local lock = { 'st', 'l', 'tok', token, 'until', U.id(untl) }
  if lazy then incarnation(inst, cur or '1', history, rec[4], rec[5], has_history, lock) end
  local attempts = tag(inst, seqs, at, tries, lock, now)
  local msgs = {}
  for i, seq in ipairs(seqs) do msgs[i] = body[seq] end
  redis.call('HSET', K.otoks(), token, inst)
  U.schedule(K.ogate(), K.olocked(), untl, inst)
  -- kv0: the store has been empty since the record was made (see V.merge)
  local kv = {}
  if rec[6] ~= '1' then kv = redis.call('HGETALL', K.kv(inst)) end
  return { 1, inst, handed_out(token, inst), attempts, rec[1], rec[2], cur, msgs, history, kv }, left
end

-- commit_args reads the commit of ack_orchestration_item's ARGV (everything
-- after the token) into a table.
function O.commit_args()
  local c = { eid = U.arg() }
  c.status, c.has_output, c.output = U.arg(), U.arg() == '1', U.arg()
  c.name, c.ver, c.parent, c.pinned = U.arg(), U.arg(), U.arg(), U.arg()
  c.cs_mode, c.cs_value = U.arg(), U.arg()
  c.ids, c.events = {}, {}
  for i = 1, U.num() do
    c.ids[i], c.events[i] = U.arg(), U.arg()
  end
  c.workers = {}
  for i = 1, U.num() do
    c.workers[i] = { U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg() }
  end
  c.orch = {}
  for i = 1, U.num() do
    c.orch[i] = { U.arg(), U.arg(), U.num() }
  end
  c.cancels = {}
  for i = 1, U.num() do
    c.cancels[i] = { U.arg(), U.arg(), U.arg() }
  end
  c.kvops = {}
  for i = 1, U.num() do
    c.kvops[i] = { U.arg(), U.arg(), U.arg(), U.arg() }
  end
  c.outbox = {}
  for i = 1, U.num() do
    c.outbox[i] = { U.arg(), U.arg(), U.arg(), U.num() }
  end
  c.owner, c.wait, c.ttl = U.arg(), U.arg(), U.num()
  return c
end

-- commit applies the turn c (O.commit_args) of the instance token holds and
-- releases its lock. It returns an error reply, before any write, for a lost
-- lock or a duplicate event id, else nil.
function O.commit(token, c, now)
  local inst, untl, tok, tg, inc, slot = O.lock_of(token)
  if not inst or untl <= now then
    return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired')
  end
  local bad, known, bytes = I.check_ids(inst, c.eid, c.ids)
  if bad then return bad end
  local rec = I.apply_metadata(inst, c.eid, c.name, c.ver, c.parent, now, inc)
  local status = I.status_fields(K.exec(inst, c.eid), c.status, c.has_output, c.output, c.pinned, now)
  local fresh = I.ensure_exec(inst, c.eid, now, known, status)
  I.append(inst, c.eid, c.ids, c.events, status, bytes)
  for _, w in ipairs(c.workers) do
    W.enqueue(w[1], w[2], U.opt(w[3]), w[4], w[5], w[6], now, w[7], w[8])
  end
  -- after the enqueues: an activity scheduled and cancelled in one turn goes
  for _, x in ipairs(c.cancels) do
    W.cancel(x[1], x[2], x[3], now)
  end
  for _, o in ipairs(c.orch) do
    local vis = o[3]
    if vis == 0 then vis = now end
    O.enqueue(o[1], o[2], vis, now)
  end
  O.send(c.outbox)
  if rec then
    I.set_custom_status(inst, c.cs_mode, c.cs_value)
    V.commit(inst, rec, c.kvops, I.TERMINAL[c.status])
    I.reindex_status(inst, rec, c.eid, c.status, now, known, fresh)
  end
  local gone = O.drop_tagged(inst, tg)
  if slot and (c.status == 'Completed' or c.status == 'Failed') then
    -- its end frees its slot of the name's limit (continue-as-new keeps it)
    gone[#gone + 1] = 'ol'
    O.leave(inst, slot, now)
  end
  -- its start is waiting no more: the record says it exists (O.enqueue)
  if rec and rec.created then gone[#gone + 1] = 'ps' end
  T.record(inst, c, now, gone)
  O.release(inst, tok, now, gone)
  return nil
end

-- send puts messages for instances of other partitions in this partition's
-- outbox, each (partition, instance, json, visible at ms or 0 for when
-- relayed): the relay moves them in id order (lua/relay_messages.lua).
function O.send(entries)
  for _, e in ipairs(entries) do
    local id = U.id(redis.call('INCR', K.seq()))
    local inst = e[2]
    redis.call('ZADD', K.obox(), id, table.concat({ id, e[1], U.id(e[4]), #inst, inst .. e[3] }, ' '))
  end
end

-- receive applies, in order, the messages relayed from partition src's
-- outbox, each (id, instance, json, visible at ms or 0 for now), skipping
-- those at or below the highest id already applied from src: a relay that
-- delivers a batch twice (it died before trimming the outbox, or two relays
-- raced) applies each message once. Returns how many it applied.
function O.receive(src, entries, now)
  local mark = tonumber(redis.call('HGET', K.rmark(), src) or '0')
  local top, n = mark, 0
  for _, e in ipairs(entries) do
    local id = tonumber(e[1])
    if id > top then
      local vis = e[4]
      if vis == 0 then vis = now end
      O.enqueue(e[2], e[3], vis, now)
      top, n = id, n + 1
    end
  end
  if top > mark then redis.call('HSET', K.rmark(), src, U.id(top)) end
  return n
end

-- fetch_args reads the ARGV of fetch_orchestration_item: token, lock ms,
-- filter encoding, filter id, lazy, sticky owner.
function O.fetch_args()
  return U.arg(), U.num(), U.arg(), U.arg(), U.arg() == '1', U.arg()
end

-- fetch locks the ready instance with the oldest visible message that the
-- filter (enc, fid) accepts for token, or one offered to the fetch's sticky
-- owner ('' none; T.pick), and returns fetch_orchestration_item's reply;
-- pass says whether the caller consumed a wake-up marker (U.PASS_ON); lazy
-- returns the history's cursor instead of its events (O.take).
function O.fetch(token, lock_ms, enc, fid, lazy, now, pass, owner)
  O.maintain(now)
  local dropped, full = {}, true
  for _ = 1, O.MAINTAIN_BATCH do
    local inst, ver, ready = T.pick(owner, enc, token)
    if not inst then
      full = false
      break
    end
    local res, left = O.take(inst, ver, token, lock_ms, now, dropped, lazy)
    if res then
      res[#res + 1] = dropped
      res[#res + 1] = now
      if more(ver, ready, left) then
        if pass then U.ready(K.owake(fid)) end
        res[#res + 1] = false
      else
        res[#res + 1] = O.idle(fid, enc, now)
      end
      return res
    end
  end
  local wake = O.idle(fid, enc, now)
  -- a whole batch of instances held or dropped, and more may be ready: a
  -- fetcher runs again now rather than at its refresh
  if full then U.ready(K.owake(fid)) end
  return { 0, now, wake, dropped }
end
