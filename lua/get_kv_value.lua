-- get_kv_value: one key of an instance's live KV view (delta over store).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance, key
-- Reply    '<updated ms>:<value>', or nil when absent
return V.value(U.arg(), U.arg())
