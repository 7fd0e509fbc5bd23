-- enqueue_for_orchestrator_checked: add one message for its instance, as
-- enqueue_for_orchestrator does, if the instance is what the caller requires
-- ('absent': no record and no start waiting; 'present': one of them), and at
-- most once per request id (a repeat whose first reply was lost finds its id
-- and changes nothing). Check and write are one step: no call slips between.
--
-- KEYS[1]  namespace prefix
-- ARGV     request id ('' none), request lifetime ms, requirement ('' none,
--          'absent', 'present'), delay ms, instance, json
-- Reply    1 enqueued, 2 already applied under this request id, or an error
--          'DXPERM EXISTS ...' / 'DXPERM NOT_FOUND ...'
local rid, ttl, req, delay = U.arg(), U.arg(), U.arg(), U.num()
local inst, json = U.arg(), U.arg()
if rid ~= '' and redis.call('EXISTS', K.request(rid)) == 1 then return 2 end
if req ~= '' then
  local known = I.known(inst)
  if req == 'absent' and known then
    return U.fail('EXISTS', 'instance ' .. inst .. ' already exists or has a start waiting')
  end
  if req == 'present' and not known then
    return U.fail('NOT_FOUND', 'instance ' .. inst .. ' does not exist and has no start waiting')
  end
end
local now = U.now()
O.enqueue(inst, json, now + delay, now)
if rid ~= '' then redis.call('SET', K.request(rid), '1', 'PX', ttl) end
return 1
