-- list_pending_starts: the newest pending-start notes, from their index.
-- Creation and deletion remove a note with its index entry, so every entry
-- read names an instance without record; one that does not (or has lost its
-- note) is skipped rather than trusted.
--
-- KEYS[1]  namespace prefix
-- ARGV     limit
-- Reply    {instance, note, instance, note, ...}, newest first, each note
--          as get_pending_start's
-- Flags    no-writes
local limit = U.num()
local out = {}
for _, inst in ipairs(redis.call('ZREVRANGE', K.ipending(), 0, limit - 1)) do
  local note = I.pending_note(inst)
  if note and redis.call('EXISTS', K.inst(inst)) == 0 then
    out[#out + 1] = inst
    out[#out + 1] = note
  end
end
return out
