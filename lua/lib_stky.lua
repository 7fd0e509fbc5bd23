-- lib_stky: sticky routing of the orchestrator queue (duroxide.StickyRouter).
--
-- An ack through an owner's view records on the instance, in the om field
-- 'sk', '<sticky until ms>:<wait ms>:<owner>'; every other ack deletes it.
-- While the record holds, an instance that becomes fetchable is offered to
-- its owner instead of being put into its ready partition: state
-- 's<version>', in the owner's set osticky (scored by order, as in a ready
-- partition) and in owait (scored by when the offer ends; a gated set, so
-- maintenance reads it only once an offer may have ended), and the owner's
-- wake key is marked. When the offer ends, maintenance puts the instance
-- into its ready partition as well, in state 'p<version>': any fetch may
-- take it now, in order, and its owner still takes it first. Whatever takes
-- an instance out of those states (a fetch, by anyone; deletion) withdraws
-- it from the owner's set (O.unindex, T.pick): a gone owner's set empties
-- itself as others take its instances, and the record is one field that
-- the next ack rewrites or deletes.
--
-- Locks are untouched: an offer is a state of an unlocked instance, as
-- ready and delayed are.

-- FAIR lists the first characters of the fetch tokens (random hex) on which
-- an owner's fetch serves the oldest fetchable instance, offered or not: one
-- fetch in eight, so an owner whose instances keep coming back cannot
-- starve older work that it alone would take.
T.FAIR = '08'

-- parse splits a sticky record into its end, wait and owner.
local function parse(sk)
  local untl, wait, owner = string.match(sk, '^(%d+):(%d+):(.*)$')
  return tonumber(untl), tonumber(wait), owner
end

-- record writes what the ack c (O.commit_args) of inst says about its
-- stickiness, before its lock is released (which may offer it): sticky to
-- the acking owner while the execution runs on; otherwise the record is
-- deleted with the lock's fields (gone: the om fields O.release deletes).
function T.record(inst, c, now, gone)
  if c.owner ~= '' and not I.TERMINAL[c.status] then
    redis.call('HSET', K.om(inst), 'sk', U.id(now + c.ttl) .. ':' .. c.wait .. ':' .. c.owner)
  else
    gone[#gone + 1] = 'sk'
  end
end

-- mine reports whether the sticky record sk (false: none) makes its
-- instance sticky to owner now ('' or nil: no owner, never).
function T.mine(sk, owner, now)
  if not sk or not owner or owner == '' then return false end
  local untl, _, o = parse(sk)
  return untl > now and o == owner
end

-- offer offers inst, fetchable now at order in partition ver, to its sticky
-- owner when it has one (extra as for O's make_ready) and reports whether
-- it did. An expired record is deleted. Fetchers of the partition are told
-- when the offer ends, as of any due time. sk is the record as the caller
-- read it (false: none), nil to read it here.
function T.offer(inst, ver, order, extra, now, sk)
  local om = K.om(inst)
  if sk == nil then sk = redis.call('HGET', om, 'sk') end
  if not sk then return false end
  local untl, wait, owner = parse(sk)
  if untl <= now then
    redis.call('HDEL', om, 'sk')
    return false
  end
  local at = now + wait
  redis.call('ZADD', K.osticky(owner), order, inst)
  U.schedule(K.ogate(), K.owait(), at, inst)
  redis.call('HSET', om, 'st', 's' .. ver, unpack(extra or {}))
  U.ready(K.oswake(owner))
  return true
end

-- owner_of returns the sticky owner of inst (false: none).
local function owner_of(inst)
  local sk = redis.call('HGET', K.om(inst), 'sk')
  if not sk then return false end
  local _, _, owner = parse(sk)
  return owner
end

-- withdraw removes inst (state 's' or 'p') from its owner's set and from
-- owait.
function T.withdraw(inst)
  local owner = owner_of(inst)
  if owner then redis.call('ZREM', K.osticky(owner), inst) end
  redis.call('ZREM', K.owait(), inst)
end

-- publish ends the offer of inst: it becomes ready for every fetch in its
-- partition, at the order it had, and stays first in its owner's set.
function T.publish(inst)
  redis.call('ZREM', K.owait(), inst)
  local ver = string.match(redis.call('HGET', K.om(inst), 'st') or '', '^s(.*)$')
  local owner = ver and owner_of(inst)
  local order = owner and redis.call('ZSCORE', K.osticky(owner), inst)
  if order then O.file_ready(inst, ver, order, 'p' .. ver) end
end

-- pick is O.pick for a fetch of owner ('' none) with filter enc and lock
-- token: the owner's oldest instance (offered or preferred) when the
-- filter accepts it, else O.pick's choice. The instance picked leaves the
-- owner's set and owait (O.take unindexes it as ready), and the owner's
-- wake key is marked while more of its instances wait (whichever marker
-- woke this fetch). The third result is O.pick's count of ready
-- partitions, or 2 when more work is fetchable after the owner's instance.
-- An entry whose instance is in neither state (none is left behind, but an
-- entry costs nothing to check) is dropped.
function T.pick(owner, enc, token)
  local best, ver, ready, order = O.pick(enc)
  if owner == '' then
    if best then T.leave(best) end
    return best, ver, ready
  end
  local set, wake = K.osticky(owner), K.oswake(owner)
  for _ = 1, O.MAINTAIN_BATCH do
    local head = redis.call('ZRANGE', set, 0, 1, 'WITHSCORES')
    local inst = head[1]
    if not inst then break end
    local st = redis.call('HGET', K.om(inst), 'st') or ''
    local sver = string.match(st, '^[sp](.*)$')
    if not sver then
      redis.call('ZREM', set, inst)
    elseif not O.compatible(sver, enc) then
      break
    elseif best ~= inst and best and string.find(T.FAIR, string.sub(token, 1, 1), 1, true)
        and order < tonumber(head[2]) then
      T.leave(best)
      U.ready(wake) -- its instance waits for the owner's next fetch
      return best, ver, ready
    else
      T.withdraw(inst)
      -- the marker its offer set announces nothing more: left set, it
      -- would wake a poller of the owner for an empty fetch, which then
      -- holds the caller that the next ack's piggyback would serve
      if head[3] then U.ready(wake) else U.unready(wake) end
      if head[3] or (best and best ~= inst) then return inst, sver, 2 end
      if best then return inst, sver, ready end
      return inst, sver, 0
    end
  end
  -- nothing of the owner's that this fetch takes: no news for its fetchers
  U.unready(wake)
  if best then T.leave(best) end
  return best, ver, ready
end

-- leave withdraws inst, picked from its ready partition, from the set of
-- the owner that still preferred it (state 'p').
function T.leave(inst)
  if O.is_kept(inst) then return end
  if string.sub(redis.call('HGET', K.om(inst), 'st') or '', 1, 1) == 'p' then T.withdraw(inst) end
end
