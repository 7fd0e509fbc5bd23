-- latest_execution_id: the highest execution id of an instance that has a
-- record, whether or not the instance has one (see I.latest).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    the execution id, or nil when the instance has none
return I.latest(U.arg())
