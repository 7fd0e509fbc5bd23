-- get_instance_stats: sizes of an instance's current execution and KV state,
-- in O(KV keys): the history is counted by LLEN and a byte counter kept by the
-- appends, and only its first event is read.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil for an unknown instance, else {event count, history bytes,
--          first event or nil, live KV keys, KV value bytes (store + delta)}
local inst = U.arg()
local cur = redis.call('HGET', K.inst(inst), 'cur')
if not cur then return false end
local hk = K.history(inst, cur)
local bytes = redis.call('HGET', K.exec(inst, cur), 'bytes') or 0
local live = V.live(inst)
local vbytes = 0
local function count(entries)
  for i = 2, #entries, 2 do
    local e = entries[i]
    if e ~= V.TOMBSTONE then
      vbytes = vbytes + #e - string.find(e, ':', 1, true)
    end
  end
end
count(redis.call('HGETALL', K.kv(inst)))
count(redis.call('HGETALL', K.kvdelta(inst)))
return { redis.call('LLEN', hk), tonumber(bytes), redis.call('LINDEX', hk, 0), #live / 2, vbytes }
