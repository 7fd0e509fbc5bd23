-- list_instances_page: one page of instance records, newest first, from the
-- index of every instance (or of one status), starting after a cursor. The
-- index is scored by creation time, so a page costs O(log n + entries
-- examined). Orchestration name and id prefix have no index: entries are
-- read until the page is full or scan of them were examined, and a short
-- page then comes with a cursor to go on from.
--
-- KEYS[1]  namespace prefix
-- ARGV     status ('' any), orchestration name ('' any), id prefix ('' any),
--          cursor ('' from the newest, else '<created ms>:<instance>' of the
--          last entry examined), limit, scan (most entries examined)
-- Reply    {next cursor ('' when the index is exhausted), {instance, record,
--          instance, record, ...}}, each record as get_instance_info's,
--          pause state included
-- Flags    no-writes
local status, name, prefix, cursor = U.arg(), U.arg(), U.arg(), U.arg()
local limit, scan = U.num(), U.num()
local idx = K.ilist()
if status ~= '' then idx = K.istatus(status) end
local pos = 0
if cursor ~= '' then
  local score, member = string.match(cursor, '^(%d+):(.*)$')
  local rank = redis.call('ZREVRANK', idx, member)
  if rank and tonumber(redis.call('ZSCORE', idx, member)) == tonumber(score) then
    pos = rank + 1
  else
    -- the cursor's instance left the index: start after every entry ordered
    -- before it (newer, or as new and greater, as ZREVRANGE orders ties)
    pos = redis.call('ZCOUNT', idx, '(' .. score, '+inf')
    for _, m in ipairs(redis.call('ZREVRANGEBYSCORE', idx, score, score)) do
      if m > member then pos = pos + 1 end
    end
  end
end
local card = redis.call('ZCARD', idx)
local out, found, last, examined = {}, 0, nil, 0
while found < limit and examined < scan and pos < card do
  local want = math.min(scan - examined, math.max(limit - found, 64))
  local entries = redis.call('ZREVRANGE', idx, pos, pos + want - 1, 'WITHSCORES')
  if #entries == 0 then break end
  for i = 1, #entries, 2 do
    local inst = entries[i]
    pos, examined, last = pos + 1, examined + 1, entries[i + 1] .. ':' .. inst
    if prefix == '' or string.sub(inst, 1, #prefix) == prefix then
      local info = I.info(inst)
      if info and (name == '' or info[1] == name) then
        out[#out + 1], out[#out + 2], found = inst, info, found + 1
        if found == limit then break end
      end
    end
  end
end
if pos >= card or not last then last = '' end
return { last, out }
