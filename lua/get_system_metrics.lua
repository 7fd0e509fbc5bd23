-- get_system_metrics: instance, execution and event totals from counters and
-- index sizes; nothing is walked.
--
-- KEYS[1]  namespace prefix
-- ARGV     none
-- Reply    {instances, executions, running, completed, failed, events}
-- Flags    no-writes
local c = redis.call('HMGET', K.stats(), 'executions', 'events')
return { redis.call('ZCARD', K.ilist()), tonumber(c[1] or 0),
  redis.call('ZCARD', K.istatus('Running')), redis.call('ZCARD', K.istatus('Completed')),
  redis.call('ZCARD', K.istatus('Failed')), tonumber(c[2] or 0) }
