-- get_kv_all_values: an instance's live KV view (delta over store, tombstones
-- hiding keys).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    {{key, '<updated ms>:<value>', ...}}
return { V.live(U.arg()) }
