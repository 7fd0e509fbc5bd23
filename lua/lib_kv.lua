-- lib_kv: the per-instance key-value store, delta model.
--
-- Writes of the running execution go to the delta (kvd); the store (kv) holds
-- the state as of the last terminal ack, which is what fetch hands to replay,
-- so a read-modify-write orchestration replays against the same values it
-- first saw. Entries are '<updated ms>:<value>'; 'x' in the delta is a
-- tombstone hiding a store entry.

V.TOMBSTONE = 'x'

-- apply runs one KV operation of an ack: 's' set key to value at ts, 'c'
-- clear key, 'a' clear every key known in store or delta.
function V.apply(inst, op, key, value, ts)
  local d = K.kvdelta(inst)
  if op == 's' then
    redis.call('HSET', d, key, ts .. ':' .. value)
  elseif op == 'c' then
    redis.call('HSET', d, key, V.TOMBSTONE)
  elseif op == 'a' then
    for _, k in ipairs(redis.call('HKEYS', K.kv(inst))) do redis.call('HSET', d, k, V.TOMBSTONE) end
    for _, k in ipairs(redis.call('HKEYS', d)) do redis.call('HSET', d, k, V.TOMBSTONE) end
  end
end

-- merge folds the delta into the store and empties it (terminal ack). It
-- reports whether the delta had entries.
function V.merge(inst)
  local d, s = K.kvdelta(inst), K.kv(inst)
  local e = redis.call('HGETALL', d)
  for i = 1, #e, 2 do
    if e[i + 1] == V.TOMBSTONE then
      redis.call('HDEL', s, e[i])
    else
      redis.call('HSET', s, e[i], e[i + 1])
    end
  end
  redis.call('DEL', d)
  return #e > 0
end

-- commit applies an ack's KV operations ops (O.commit_args) to inst, whose
-- record rec (I.apply_metadata) says in kv0 and kvd0 whether store and
-- delta have been empty since it was made, and merges the delta when the
-- execution ends (terminal). A record made with both flags set spares
-- instances that never use KV a read of the store at every fetch (O.take)
-- and of the delta at their end; the first operation clears kvd0, the first
-- merge of entries kv0. A record made before the flags has neither, and is
-- read as before.
function V.commit(inst, rec, ops, terminal)
  if #ops > 0 and rec[6] then
    redis.call('HDEL', K.inst(inst), 'kvd0')
    rec[6] = false
  end
  for _, op in ipairs(ops) do
    V.apply(inst, op[1], op[2], op[3], op[4])
  end
  if terminal and not rec[6] and V.merge(inst) and rec[5] then
    redis.call('HDEL', K.inst(inst), 'kv0')
  end
end

-- value returns the live entry of key (delta over store), or false.
function V.value(inst, key)
  local e = redis.call('HGET', K.kvdelta(inst), key)
  if e == V.TOMBSTONE then return false end
  if e then return e end
  return redis.call('HGET', K.kv(inst), key)
end

-- live returns the merged view as a flat list key, entry, key, entry...
function V.live(inst)
  local view = {}
  local order = {}
  local s = redis.call('HGETALL', K.kv(inst))
  for i = 1, #s, 2 do
    view[s[i]] = s[i + 1]
    order[#order + 1] = s[i]
  end
  local d = redis.call('HGETALL', K.kvdelta(inst))
  for i = 1, #d, 2 do
    if view[d[i]] == nil then order[#order + 1] = d[i] end
    if d[i + 1] == V.TOMBSTONE then view[d[i]] = false else view[d[i]] = d[i + 1] end
  end
  local out = {}
  for _, k in ipairs(order) do
    if view[k] then
      out[#out + 1] = k
      out[#out + 1] = view[k]
    end
  end
  return out
end
