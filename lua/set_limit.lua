-- set_limit: set, replace or delete the limit of one activity name
-- (lib_lim), and list again each of its groups under the new limit: a
-- group held back by the old one is handed out at once when the new one
-- allows it.
--
-- KEYS[1]  namespace prefix
-- ARGV     activity name, limit ('<concurrency> <rate per s> <burst>', or
--          '' to delete it)
-- Reply    1 when the name had a limit, else 0
local name, conf = U.arg(), U.arg()
if conf == '' then conf = false end
if L.set(name, conf, U.now()) then return 1 end
return 0
