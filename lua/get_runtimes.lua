-- get_runtimes: what the queues know of the runtimes serving the namespace,
-- for people to read. The provider keeps no register of runtimes; it knows
-- the capability filters of orchestrator fetchers that blocked waiting for
-- work (ofilters, each refreshed at most every tenth of O.FILTER_TTL and
-- forgotten after it), the sessions worker owners hold (slive, with their
-- owners), and how many turns and activity items are locked now.
--
-- KEYS[1]  namespace prefix
-- ARGV     limit (most sessions read)
-- Reply    {now, locked turns, locked activity items, {filter, last seen,
--          ...}, {session, owner, locked until, ...} (latest lock expiry
--          first), claimed sessions}
-- Flags    no-writes
local limit = U.num()
local now = U.now()
local filters = {}
local seen = redis.call('ZRANGE', K.ofseen(), 0, -1, 'WITHSCORES')
for i = 1, #seen, 2 do
  local enc = redis.call('HGET', K.ofilters(), seen[i])
  if enc then
    filters[#filters + 1] = enc
    filters[#filters + 1] = seen[i + 1]
  end
end
local sessions = {}
local live = redis.call('ZREVRANGEBYSCORE', K.slive(), '+inf', '(' .. U.id(now), 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #live, 2 do
  sessions[#sessions + 1] = live[i]
  sessions[#sessions + 1] = redis.call('HGET', K.sess(live[i]), 'o') or ''
  sessions[#sessions + 1] = live[i + 1]
end
return { U.id(now), redis.call('ZCOUNT', K.olocked(), '(' .. U.id(now), '+inf'),
  redis.call('ZCOUNT', K.wlocked(), '(' .. U.id(now), '+inf'), filters, sessions,
  redis.call('ZCOUNT', K.slive(), '(' .. U.id(now), '+inf') }
