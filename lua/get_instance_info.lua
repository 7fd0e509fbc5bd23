-- get_instance_info: an instance record with the status and output of its
-- current execution.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil for an unknown instance, else {name, version, current
--          execution, created, updated, parent, status, output}
return I.info(U.arg())
