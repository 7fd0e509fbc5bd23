-- schedule_list: every schedule's record, oldest first.
--
-- KEYS[1]  namespace prefix
-- ARGV     (none)
-- Reply    {id, {record as HGETALL}, ...}
-- Flags    no-writes
local out = {}
for _, id in ipairs(redis.call('ZRANGE', K.schedall(), 0, -1)) do
  local rec = redis.call('HGETALL', K.sched(id))
  if #rec > 0 then
    out[#out + 1] = id
    out[#out + 1] = rec
  end
end
return out
