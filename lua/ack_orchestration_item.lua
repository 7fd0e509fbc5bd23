-- ack_orchestration_item: commit an orchestration turn. Everything below
-- happens or nothing does: every precondition is checked before the first
-- write (Redis never rolls a script back).
--
-- KEYS[1]  namespace prefix
-- ARGV     token, execution id,
--          status ('' unchanged), has output ('0'|'1'), output,
--          name ('' unchanged), version ('' unchanged), parent ('' none),
--          pinned version ('' unchanged),
--          custom status mode ('0' none, '1' set, '2' clear), value,
--          n events, then n x (event id, json),
--          n worker items, then n x (json, queue, session ('' none, else
--            '+' .. id), instance, execution id, activity id),
--          n orchestrator items, then n x (instance, json, visible at ms or
--            '0' for now),
--          n cancelled, then n x (instance, execution id, activity id),
--          n kv ops, then n x (op 's'|'c'|'a', key, value, updated ms)
-- Reply    1, or an error 'DXPERM LOCK_LOST ...' or 'DXPERM DUPLICATE ...'
local token, eid = U.arg(), U.arg()
local status, has_output, output = U.arg(), U.arg() == '1', U.arg()
local name, ver, parent, pinned = U.arg(), U.arg(), U.arg(), U.arg()
local cs_mode, cs_value = U.arg(), U.arg()
local ids, events = {}, {}
for i = 1, U.num() do
  ids[i], events[i] = U.arg(), U.arg()
end
local workers = {}
for i = 1, U.num() do
  workers[i] = { U.arg(), U.arg(), U.arg(), U.arg(), U.arg(), U.arg() }
end
local orch = {}
for i = 1, U.num() do
  orch[i] = { U.arg(), U.arg(), U.num() }
end
local cancels = {}
for i = 1, U.num() do
  cancels[i] = { U.arg(), U.arg(), U.arg() }
end
local kvops = {}
for i = 1, U.num() do
  kvops[i] = { U.arg(), U.arg(), U.arg(), U.arg() }
end

local now = U.now()
local inst, untl = O.lock_of(token)
if not inst or untl <= now then
  return U.fail('LOCK_LOST', 'lock_token ' .. token .. ' is invalid or expired')
end
local bad = I.check_ids(inst, eid, ids)
if bad then return bad end

local has_record = I.apply_metadata(inst, eid, name, ver, parent, now)
local ek = I.ensure_exec(inst, eid, now)
I.apply_status(ek, status, has_output, output, pinned, now)
I.append(inst, eid, ids, events)
for _, w in ipairs(workers) do
  W.enqueue(w[1], w[2], U.opt(w[3]), w[4], w[5], w[6], now)
end
-- after the enqueues: an activity scheduled and cancelled in one turn goes
for _, c in ipairs(cancels) do
  W.cancel(c[1], c[2], c[3], now)
end
for _, o in ipairs(orch) do
  local vis = o[3]
  if vis == 0 then vis = now end
  O.enqueue(o[1], o[2], vis, now)
end
if has_record then
  I.set_custom_status(inst, cs_mode, cs_value)
  for _, op in ipairs(kvops) do
    V.apply(inst, op[1], op[2], op[3], op[4])
  end
  if I.TERMINAL[status] then V.merge(inst) end
  I.reindex_status(inst)
end
O.drop_tagged(inst)
O.release(inst, token, now)
return 1
