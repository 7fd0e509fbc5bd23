-- relay_messages: apply, in the target partition, messages another
-- partition's turns put in its outbox (O.send), in id order, each once.
--
-- KEYS[1]  the target partition's prefix
-- ARGV     source partition, n, then n x (outbox id, instance, json,
--          visible at ms or '0' for now), ids increasing
-- Reply    how many were applied (the rest had been already)
local src, n = U.arg(), U.num()
local entries = {}
for i = 1, n do
  entries[i] = { U.arg(), U.arg(), U.arg(), U.num() }
end
return O.receive(src, entries, U.now())
