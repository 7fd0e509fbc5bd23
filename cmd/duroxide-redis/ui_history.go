package main

import (
	"sync"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// historyCacheSize is how many execution histories the dashboard keeps:
// enough for a few people paging through a few instances, and for a
// running instance's page refreshing itself, without reading a long
// history from Redis again for each page or refresh.
const historyCacheSize = 8

// historyCache keeps the histories the dashboard read last. An execution's
// history only grows, so one read is current while the execution's event
// count (read with the record, for every page) is the count it holds. The
// instance's creation time is part of the key: an instance deleted and
// started again under its id has a new history.
type historyCache struct {
	mu      sync.Mutex
	entries map[historyKey][]duroxide.Event
	order   []historyKey // oldest first
}

type historyKey struct {
	instance  string
	created   uint64
	execution uint64
}

// read returns execution's history of the instance, whose executions are
// execs as just read, from the cache while it is current.
func (c *historyCache) read(s *session, info instanceJSON, execution uint64, execs []executionJSON) ([]duroxide.Event, error) {
	count := -1
	var ids []uint64
	for _, e := range execs {
		ids = append(ids, e.Execution)
		if e.Execution == execution {
			count = e.Events
		}
	}
	if count < 0 {
		return nil, duroxide.Errorf("history", duroxide.ErrNotFound, "execution %d of instance %s not found (it has %v)", execution, info.Instance, ids)
	}
	k := historyKey{info.Instance, info.createdMs, execution}
	c.mu.Lock()
	h, ok := c.entries[k]
	c.mu.Unlock()
	if ok && len(h) == count {
		return h, nil
	}
	h, err := s.admin.ReadHistoryWithExecutionID(s.ctx, info.Instance, execution)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[historyKey][]duroxide.Event{}
	}
	if _, ok := c.entries[k]; !ok {
		c.order = append(c.order, k)
		if len(c.order) > historyCacheSize {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.entries[k] = h
	return h, nil
}
