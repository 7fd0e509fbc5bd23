-- get_instance_tree: an instance and all its descendants, breadth first, the
-- root first (GetInstanceTree).
--
-- KEYS[1]  namespace prefix
-- ARGV     instance
-- Reply    {ids}
return { I.tree(U.arg()) }
