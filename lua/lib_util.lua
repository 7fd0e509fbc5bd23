-- lib_util: the clock, ARGV reading, exact id arithmetic and wake-up markers.
-- Every script includes it first.

-- A wake-up marker only matters to a fetcher blocked right now, and every
-- fetcher runs its script before it blocks, so an old marker carries no news:
-- it expires instead of accumulating for tag queues or owners that are gone.
U.WAKE_TTL = 60000

-- now is the server clock in milliseconds: the one clock every lock, delay and
-- timestamp of the namespace is measured against.
function U.now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- id formats an integer for keys, fields and replies. tostring would print
-- numbers >= 1e15 with an exponent on real Redis, and a number handed to
-- redis.call is formatted as a double ('%.14g'), several times slower than
-- this: hot paths pass strings.
function U.id(v)
  if type(v) == 'number' then return string.format('%d', v) end
  return v
end

-- ARGV is read front to back: U.arg() returns the next value as a string,
-- U.num() as a number.
local argi = 0
function U.arg()
  argi = argi + 1
  return ARGV[argi]
end

function U.num()
  return tonumber(U.arg())
end

-- opt decodes an optional string as Go's args.opt writes it: '' is absent
-- (false), anything else is '+' followed by the value.
function U.opt(s)
  if s == '' then return false end
  return string.sub(s, 2)
end

-- fail returns the error reply by which a script reports a contract
-- violation: 'DXPERM', a code naming its kind (one of redisprovider's
-- scriptCodes: LOCK_LOST, NOT_FOUND, INVALID, DUPLICATE, CONFLICT, EXISTS), then the
-- message. The script returns it before its first write.
function U.fail(code, msg)
  return redis.error_reply('DXPERM ' .. code .. ' ' .. msg)
end

-- cmpid compares two ids written as decimal strings without leading zeros.
-- Event and execution ids are u64: a double would round them above 2^53.
function U.cmpid(a, b)
  if #a ~= #b then
    if #a < #b then return -1 end
    return 1
  end
  if a == b then return 0 end
  if a < b then return -1 end
  return 1
end

-- split cuts s at every occurrence of the single character sep.
function U.split(s, sep)
  local out = {}
  local start = 1
  while true do
    local i = string.find(s, sep, start, true)
    if not i then
      out[#out + 1] = string.sub(s, start)
      return out
    end
    out[#out + 1] = string.sub(s, start, i - 1)
    start = i + 1
  end
end

-- A blocked fetcher runs its script again at least this often (the reply
-- of an empty fetch says when), so the filters it registered stay known and
-- the longest it can miss a marker that was lost (or expired) is bounded.
-- The due loop (lua/move_due.lua) runs at least this often too.
U.REFRESH = 10000

-- marked holds the markers this call has set (key .. member): a turn that
-- readies several items for one class sets its marker once.
local marked = {}

-- mark sets member ('w' ready, 'd' the due loops') of a wake-up marker key and
-- reports whether it was new. Two members at most, so markers never pile
-- up; the key's expiry is set when a member is created.
local function mark(key, member)
  if marked[key .. member] then return false end
  marked[key .. member] = true
  if redis.call('ZADD', key, '0', member) == 0 then return false end
  redis.call('PEXPIRE', key, U.id(U.WAKE_TTL))
  return true
end

-- unready removes the ready marker of key: no work of its class is
-- eligible now.
function U.unready(key)
  marked[key .. 'w'] = nil
  redis.call('ZREM', key, 'w')
end

-- memo holds what this call read once for all its uses (U.memo).
local memo = {}

-- memo returns read()'s value, read once per call under name; U.forget
-- drops it when the call changes what it read.
function U.memo(name, read)
  local v = memo[name]
  if v == nil then
    v = read()
    memo[name] = v
  end
  return v
end

-- Flow settings by name (K.flow(), docs/flow-control.md): priorities of
-- activity and orchestration names, the aging window, paused orchestration
-- names. A namespace where none is set has no such hash, so what files or
-- fetches work pays one EXISTS per call for them, and reads a field only
-- when the hash exists (each once per call).

-- WINDOW is the aging window when none is set: a priority step moves an
-- item this many sequence numbers ahead (U.shift).
U.WINDOW = 1000

-- flowing reports whether the namespace has any flow setting.
function U.flowing()
  return U.memo('flow', function() return redis.call('EXISTS', K.flow()) == 1 end)
end

-- flow returns the flow setting field (false: unset).
function U.flow(field)
  if not U.flowing() then return false end
  return U.memo('flow:' .. field, function() return redis.call('HGET', K.flow(), field) end)
end

-- flow_fields reads the flow setting fields (a list) in one HMGET, for
-- U.flow to answer from: a caller that needs several fields of one name
-- pays one command. Fields read already are not read again.
function U.flow_fields(fields)
  if not U.flowing() then return end
  local want = {}
  for _, f in ipairs(fields) do
    if memo['flow:' .. f] == nil then want[#want + 1] = f end
  end
  if #want == 0 then return end
  local v = redis.call('HMGET', K.flow(), unpack(want))
  for i, f in ipairs(want) do memo['flow:' .. f] = v[i] end
end

-- shift returns the ready score of an entry at order (the seq that files
-- it, FIFO) with priority prio: prio aging windows earlier, so it goes
-- before entries of lower priority filed less than that many sequence
-- numbers after it, and after every other. FIFO holds within a priority,
-- and an entry of priority p waits behind at most (q - p) * window entries
-- of priority q filed after it: the bound on starvation.
function U.shift(order, prio)
  if not prio or prio == 0 then return order end
  return order - prio * (tonumber(U.flow('W')) or U.WINDOW)
end

-- Keeping aside, per queue q ('o', 'w'): a script that fetches right after
-- an ack turns it on (U.keep) so that the first entry its ack would make
-- ready is kept for that fetch instead (U.put_aside; lib_orch's make_ready,
-- lib_work's W.ready), and files it if the fetch did not take it
-- (U.unkeep, then O.flush / W.flush).

-- aside returns this call's record of keeping for queue q: on, and the
-- kept entry (false: none). A memo, because a function library keeps its
-- locals from call to call and U.reset forgets memos: a call that fails
-- half way leaves nothing on for the next.
local function aside(q)
  return U.memo('aside' .. q, function() return { on = false, kept = false } end)
end

-- keep turns keeping aside on for queue q, for a fetch of sticky owner
-- owner ('' or nil: none; see U.keeper).
function U.keep(q, owner)
  local a = aside(q)
  a.on, a.owner = true, owner or ''
end

-- keeper returns the sticky owner of the fetch keeping is on for in queue q
-- ('' none), or nil when keeping is off.
function U.keeper(q)
  local a = aside(q)
  if a.on then return a.owner end
  return nil
end

-- kept returns the entry kept aside for queue q (false: none).
function U.kept(q)
  return aside(q).kept
end

-- put_aside keeps entry when keeping is on for q and nothing is kept yet,
-- and reports whether it did.
function U.put_aside(q, entry)
  local a = aside(q)
  if not a.on or a.kept then return false end
  a.kept = entry
  return true
end

-- drop_aside forgets the entry kept for q: taken, or deleted.
function U.drop_aside(q)
  aside(q).kept = false
end

-- unkeep turns keeping off for q and returns the entry still kept (false:
-- none), which the caller files.
function U.unkeep(q)
  local a = aside(q)
  local k = a.kept
  a.on, a.kept = false, false
  return k
end

-- forget drops the value U.memo holds under name.
function U.forget(name)
  memo[name] = nil
end

-- readied holds the queues ('o', 'w': U.queue_of) this call made work
-- eligible in (U.ready), for U.readied.
local readied = {}

-- ready tells the fetchers blocked on key that they have work they can take
-- now; it reports whether no such news was pending (the marker is new).
function U.ready(key)
  readied[U.queue_of(key)] = true
  return mark(key, 'w')
end

-- readied reports whether this call made work eligible now in queue q: a
-- fetch for a caller whose last fetch found nothing can only find what
-- this call readied (due work is made eligible by the due loop, whose
-- markers wake the fetchers), so an ack's piggybacked fetch is skipped when
-- nothing was.
function U.readied(q)
  return readied[q] == true
end

-- queue_of names the queue of a wake key: 'o' for the orchestrator's
-- filter keys and sticky owners' keys, 'w' for every worker class.
function U.queue_of(key)
  local ow, osw = K.owake(''), K.oswake('')
  if string.sub(key, 1, #ow) == ow or string.sub(key, 1, #osw) == osw then return 'o' end
  return 'w'
end

-- The due loop. Whatever becomes eligible later (a timer, a delayed item,
-- an expiring lock or session) is moved to ready by the maintenance of its
-- queue (O.maintain, W.maintain), which sets the markers of the fetchers
-- that can take it. Each process runs one loop per partition that runs
-- that maintenance (lua/move_due.lua) when the earliest due time comes, so
-- fetchers never wait for due times themselves: an empty fetch only
-- clears its markers (U.idle). K.duenext() holds when a loop runs next:
-- the earliest of the gates, or U.REFRESH after the last run, and
-- K.dueowner() which loop claimed that time (U.plan): only that one runs
-- at it, every other one at its refresh, so one process moves each due
-- time however many run loops. An insert due before it (U.schedule) moves
-- it earlier, drops its claim and sets the loops' marker (K.duewake()),
-- which one loop pops and runs at once, claiming the new time. A loop
-- that closes gives its claim up the same way (lua/move_due.lua); one that
-- dies leaves it to the others' refresh. A fetch still applies what is due
-- when its gate has passed (a loop may be late, or none run: a process
-- that never waits runs none).
local duenext = nil -- this call's read of K.duenext() (0: unknown)

-- due makes the due loops run by time t.
function U.due(t)
  if duenext == nil then duenext = tonumber(redis.call('GET', K.duenext())) or 0 end
  if t >= duenext then return end -- they run by then, or none runs (0)
  duenext = t
  redis.call('SET', K.duenext(), U.id(t))
  redis.call('DEL', K.dueowner())
  mark(K.duewake(), 'd')
end

-- A due time claimed by a loop that died (kill -9: no Close gives the claim
-- up) would wait for the other loops' refresh. So one other loop, the
-- backup (K.duebackup(), which expires unless renewed), runs U.DUE_GRACE
-- after each claimed time: when the claimant ran, that run finds nothing
-- due; when it did not, the backup applies what is due and claims the next
-- time. A lock whose holder died is thus reclaimed within its timeout plus
-- U.DUE_GRACE; one backup per partition bounds the cost (at most a run per
-- U.DUE_GRACE while due times come, none when none do).
U.DUE_GRACE = 1000

-- backup makes loop id the backup, running at t, unless another loop is;
-- it returns when id runs next.
local function backup(id, cur, now, t)
  if cur and cur ~= id then return now + U.REFRESH end
  redis.call('SET', K.duebackup(), id, 'PX', U.id(t - now + U.DUE_GRACE))
  return t
end

-- plan returns when loop id runs next after a run at now that applied what
-- was due: the earliest gate, U.REFRESH later at the latest, which it
-- claims, unless another loop holds the claim of that very time (then id
-- runs U.DUE_GRACE after it if it is the backup, else at its refresh).
function U.plan(id, now, gates)
  local at, refresh = now + U.REFRESH, now + U.REFRESH
  for _, g in ipairs(gates) do
    if U.gate(g) < at then at = U.gate(g) end
  end
  local cur = redis.call('MGET', K.duenext(), K.dueowner(), K.duebackup())
  if at > now and tonumber(cur[1]) == at and cur[2] and cur[2] ~= id then
    return backup(id, cur[3], now, math.min(refresh, at + U.DUE_GRACE))
  end
  duenext = at
  redis.call('MSET', K.duenext(), U.id(at), K.dueowner(), id)
  if cur[3] == id then redis.call('DEL', K.duebackup()) end -- a claimant backs up nobody
  return at
end

-- unplan gives up loop id's claim (it is closing) and wakes another loop,
-- which claims the time instead; a closing backup steps down.
function U.unplan(id)
  local cur = redis.call('MGET', K.dueowner(), K.duebackup())
  if cur[2] == id then redis.call('DEL', K.duebackup()) end
  if cur[1] ~= id then return end
  redis.call('DEL', K.dueowner())
  mark(K.duewake(), 'd')
end

-- idle records that a fetcher blocked on key found nothing to take: its
-- markers are removed (no work of its class is eligible now; the due loop
-- announces what becomes eligible later). It runs its script again at the
-- returned time, its refresh.
function U.idle(key, now)
  U.unready(key)
  return now + U.REFRESH
end

-- A fetcher woken by a wake-up marker consumed it, so when it takes work
-- while more is eligible it sets the marker again: one marker wakes one
-- waiter, and a burst is handed out waiter after waiter. The fetch of an
-- ack-and-fetch consumed none: every marker that announced the work it
-- takes is still set or held by a woken fetcher whose script is yet to run
-- (and will pass it on), so it passes nothing on. U.PASS_ON and U.KEEP name
-- the two cases for the fetch functions.
U.PASS_ON = true
U.KEEP = false

-- first returns the lowest score of a sorted set, or false when it is empty.
function U.first(key)
  local r = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
  if r[2] then return tonumber(r[2]) end
  return false
end

-- minof returns the smaller of two optional numbers (false = absent).
function U.minof(a, b)
  if not a then return b end
  if not b then return a end
  if b < a then return b end
  return a
end

-- chunked runs the variadic command cmd on key with args, at most 1000 at a
-- time (unpack is bounded by the Lua stack; an even count keeps field,
-- value pairs together), and returns the elements of its replies in order.
function U.chunked(cmd, key, args)
  local out = {}
  for i = 1, #args, 1000 do
    local r = redis.call(cmd, key, unpack(args, i, math.min(i + 999, #args)))
    if type(r) == 'table' then
      for j = 1, #r do out[#out + 1] = r[j] end
    end
  end
  return out
end

-- counter adds delta to one of the namespace counters.
function U.count(field, delta)
  if delta ~= 0 then redis.call('HINCRBY', K.stats(), field, U.id(delta)) end
end

-- Maintenance gates. The sorted sets scored by when something becomes due
-- (locks, delays, session leases, future messages) would cost every fetch a
-- range read each. A gate key holds a lower bound of their earliest score:
-- every insert below it lowers it, and the maintenance that passes it
-- reads the sets and stores their exact minimum ('n' when they are empty).
-- Removals leave it: a bound too low costs one maintenance pass, never a
-- missed expiry. An absent gate (data written before gates) reads as due.
local gates = {} -- this call's reads: gate key -> bound (math.huge: none)

-- gate returns the bound of gate key (0 when unknown).
function U.gate(key)
  local g = gates[key]
  if g == nil then
    local v = redis.call('GET', key)
    if v == 'n' then g = math.huge else g = tonumber(v) or 0 end
    gates[key] = g
  end
  return g
end

-- schedule adds member to the gated set with score t.
function U.schedule(key, set, t, member)
  redis.call('ZADD', set, U.id(t), member)
  if t < U.gate(key) then
    redis.call('SET', key, U.id(t))
    gates[key] = t
    U.due(t) -- the loops run by every gate (U.plan), so only a lower one can be news
  end
end

-- settle stores the exact earliest score of the gate's sets, after
-- maintenance removed what was due; returns it (false: none).
function U.settle(key, sets)
  local low = false
  for _, set in ipairs(sets) do low = U.minof(low, U.first(set)) end
  redis.call('SET', key, low and U.id(low) or 'n')
  gates[key] = low or math.huge
  return low
end

-- reset starts the next U.arg() at ARGV's first value and forgets the
-- gates, due time and memos read and the markers and queues readied. A
-- function library keeps
-- its chunk's locals from call to call, so each of its functions resets
-- them first; a script gets a fresh chunk per call.
function U.reset()
  argi = 0
  gates = {}
  readied = {}
  duenext = nil
  marked = {}
  memo = {}
end
