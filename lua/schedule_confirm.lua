-- schedule_confirm: ends a claimed firing: records its outcome, advances
-- the schedule to its next time (computed by the scheduler from the spec,
-- unless the schedule was updated since the claim: rev differs, and the
-- update's reset stands) and puts it back in the due index unless paused.
-- A firing no longer in progress (confirmed by another scheduler after
-- this one's lease ran out, or its schedule deleted) changes nothing.
--
-- KEYS[1]  namespace prefix
-- ARGV     id, nominal, rev, outcome ('': none recorded; 'started',
--          'skipped', 'buffered', 'missed', ...), instance, next ('-':
--          keep, 'end': no more firings, else the nominal ms), fire at ms
-- Reply    the outcome recorded ('buffered' becomes 'skipped' when a
--          firing is already buffered), or false when the firing was not
--          in progress
local id, nominal, rev, outcome, inst, nextt, fireat = U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg()
local key = K.sched(id)
if redis.call('HGET', key, 'pnom') ~= nominal then return false end
local now = U.now()
redis.call('HDEL', key, 'pnom', 'pkind')
redis.call('ZREM', K.schedpend(), id)
if outcome == 'buffered' then
  if redis.call('HGET', key, 'buf') then
    outcome = 'skipped'
  else
    redis.call('HSET', key, 'buf', nominal)
    redis.call('ZADD', K.schedbuf(), now, id)
  end
end
if outcome == 'started' then redis.call('HSET', key, 'last', inst) end
if outcome ~= '' then
  redis.call('ZADD', K.schedfires(id), nominal, nominal .. ' ' .. outcome .. ' ' .. now .. ' ' .. inst)
  redis.call('ZREMRANGEBYRANK', K.schedfires(id), 0, -101)
end
if nextt ~= '-' and redis.call('HGET', key, 'rev') == rev then
  if nextt == 'end' then
    redis.call('HSET', key, 'next', 'end')
    redis.call('HDEL', key, 'fireat')
  else
    redis.call('HSET', key, 'next', nextt, 'fireat', fireat)
  end
end
if redis.call('HGET', key, 'paused') ~= '1' then
  local n = redis.call('HGET', key, 'next')
  if not n or n == '' then
    redis.call('ZADD', K.scheddue(), 0, id)
  elseif n ~= 'end' then
    redis.call('ZADD', K.scheddue(), redis.call('HGET', key, 'fireat'), id)
  end
end
return outcome
