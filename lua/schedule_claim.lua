-- schedule_claim: claims firings for one scheduler: first those whose
-- claim's lease ran out unconfirmed (their scheduler stopped between claim
-- and confirm; the start is idempotent, so doing it again is safe), then
-- the due ones. A due schedule leaves the due index and records its firing
-- as in progress (pnom: nominal time, pkind: 'due', or 'init' when its
-- next time is yet to be computed) with a lease; the confirm of that
-- firing advances the schedule and puts it back. One firing per schedule
-- is in progress at a time, so no two schedulers claim the same one.
--
-- KEYS[1]  namespace prefix
-- ARGV     lease ms, max firings
-- Reply    {now, {id, {record as HGETALL}}, ...}
local lease, max = U.num(), U.num()
local now = U.now()
local until_ = now + lease
local out = {now}
local taken = 0
local function emit(id)
  out[#out + 1] = {id, redis.call('HGETALL', K.sched(id))}
  taken = taken + 1
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.schedpend(), '-inf', now, 'LIMIT', 0, max)) do
  if redis.call('HGET', K.sched(id), 'pnom') then
    redis.call('ZADD', K.schedpend(), until_, id)
    emit(id)
  else
    redis.call('ZREM', K.schedpend(), id)
  end
end
if taken < max then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.scheddue(), '-inf', now, 'LIMIT', 0, max - taken)) do
    local key = K.sched(id)
    redis.call('ZREM', K.scheddue(), id)
    if redis.call('EXISTS', key) == 1 then
      local nextt = redis.call('HGET', key, 'next')
      if nextt and nextt ~= '' and nextt ~= 'end' then
        redis.call('HSET', key, 'pnom', nextt, 'pkind', 'due')
      else
        redis.call('HSET', key, 'pnom', now, 'pkind', 'init')
      end
      redis.call('ZADD', K.schedpend(), until_, id)
      emit(id)
    end
  end
end
return out
