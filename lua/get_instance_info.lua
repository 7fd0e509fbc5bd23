-- get_instance_info: an instance record with the status and output of its
-- current execution, and its pause state (I.info), so a caller that shows
-- both reads them in one step.
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    nil for an unknown instance, else {name, version, current
--          execution, created, updated, parent, status, output, paused
--          since (nil when not paused), held}
return I.info(U.arg())
