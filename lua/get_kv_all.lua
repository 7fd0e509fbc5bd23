-- get_kv_all: an instance's live KV view (delta over store, tombstones
-- hiding keys).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    {{key, '<updated ms>:<value>', ...}}
-- requires: kv
return { V.live(U.arg()) }
