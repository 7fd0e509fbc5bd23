package durable

import (
	"container/list"
	"strconv"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// CacheStats counts what the instance cache did since the runtime started.
type CacheStats struct {
	// Hits are turns that resumed a cached instance: no history read, no
	// replay. Misses are turns that read and replayed the history.
	Hits, Misses uint64
	// Evictions are cached instances dropped before their next turn: to
	// respect the bounds, or because their stored history moved on
	// elsewhere (another runtime ran them). A turn that does not commit
	// (its lock was lost, its ack failed) caches nothing: the instance's
	// next turn misses.
	Evictions uint64
	// Entries and Bytes are what the cache holds now (Bytes is an estimate).
	Entries int
	Bytes   int64
}

// instanceCache keeps the replay engines of running executions between
// turns, bounded by count and by estimated bytes, least recently used out
// first. A turn takes its engine out (so no two turns share one) and puts
// it back after its commit applied; anything else closes it.
type instanceCache struct {
	maxEntries int
	maxBytes   int64
	maxWait    time.Duration // the longest a take waits for a commit here

	mu      sync.Mutex
	lru     *list.List // of *cacheEntry, most recent first
	byInst  map[string]*list.Element
	bytes   int64
	stats   CacheStats
	stopped bool
	// committing holds, per instance, a channel closed once this runtime's
	// turn that is committing it has cached its engine or given up. The
	// commit releases the instance's lock before the turn learns that it
	// applied, so another dispatcher here may fetch the instance's next
	// message first: its take waits for the engine instead of missing (and
	// the first turn then caching a copy already out of date).
	committing map[string]chan struct{}
}

// cacheEntry is one cached execution and where its history ended when it
// was cached.
type cacheEntry struct {
	instance string
	cursor   duroxide.HistoryCursor
	version  string // the orchestration version the code runs
	eng      *engine.Engine
	bytes    int64
}

func newInstanceCache(maxEntries int, maxBytes int64, maxWait time.Duration) *instanceCache {
	return &instanceCache{maxEntries: maxEntries, maxBytes: maxBytes, maxWait: maxWait, lru: list.New(),
		byInst: map[string]*list.Element{}, committing: map[string]chan struct{}{}}
}

func (c *instanceCache) enabled() bool { return c.maxEntries > 0 && c.maxBytes > 0 }

// take removes and returns the engine of instance if the stored history
// still ends where the cached copy does; an entry that no longer matches
// is evicted. A nil result is a miss.
func (c *instanceCache) take(instance string, cur duroxide.HistoryCursor) *cacheEntry {
	c.mu.Lock()
	c.awaitCommit(instance)
	el, ok := c.byInst[instance]
	if !ok {
		c.stats.Misses++
		c.mu.Unlock()
		return nil
	}
	e := c.remove(el)
	if !e.matches(cur) {
		c.stats.Misses++
		c.stats.Evictions++
		c.mu.Unlock()
		e.eng.Close()
		return nil
	}
	c.stats.Hits++
	c.mu.Unlock()
	return e
}

// commit marks instance as being committed by a turn that will cache its
// engine if the commit applies, until the returned func is called (after
// the put, if any).
func (c *instanceCache) commit(instance string) (done func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.committing[instance] = ch
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.committing[instance] == ch {
			delete(c.committing, instance)
		}
		c.mu.Unlock()
		close(ch)
	}
}

// awaitCommit waits while a turn here is committing instance, at most
// maxWait (a commit that slow has its lock expired anyway). The caller holds
// mu, which is released meanwhile.
func (c *instanceCache) awaitCommit(instance string) {
	var timeout <-chan time.Time
	for {
		ch, ok := c.committing[instance]
		if !ok {
			return
		}
		if timeout == nil {
			t := time.NewTimer(c.maxWait)
			defer t.Stop()
			timeout = t.C
		}
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-timeout:
			c.mu.Lock()
			return
		}
	}
}

// matches reports whether cur, fetched now, is where the cached engine's
// history ends: same execution, same last event, same incarnation (an
// instance deleted and created again under the same id differs in it).
func (e *cacheEntry) matches(cur duroxide.HistoryCursor) bool {
	return e.cursor == cur
}

// put caches an engine after its turn committed, evicting the least
// recently used entries beyond the bounds; an engine that alone exceeds
// them, or a stopped cache, closes it instead.
func (c *instanceCache) put(e *cacheEntry) {
	e.bytes = int64(e.eng.Bytes())
	c.mu.Lock()
	if c.stopped || !c.enabled() || e.bytes > c.maxBytes {
		c.stats.Evictions++
		c.mu.Unlock()
		e.eng.Close()
		return
	}
	var victims []*cacheEntry
	if el, ok := c.byInst[e.instance]; ok {
		victims = append(victims, c.remove(el))
	}
	c.byInst[e.instance] = c.lru.PushFront(e)
	c.bytes += e.bytes
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		victims = append(victims, c.remove(c.lru.Back()))
	}
	c.stats.Evictions += uint64(len(victims))
	c.mu.Unlock()
	closeEntries(victims)
}

// drop evicts instance's entry, if any.
func (c *instanceCache) drop(instance string) {
	c.mu.Lock()
	el, ok := c.byInst[instance]
	var e *cacheEntry
	if ok {
		e = c.remove(el)
		c.stats.Evictions++
	}
	c.mu.Unlock()
	if e != nil {
		e.eng.Close()
	}
}

// stop closes every entry and caches nothing more.
func (c *instanceCache) stop() {
	c.mu.Lock()
	c.stopped = true
	var all []*cacheEntry
	for c.lru.Len() > 0 {
		all = append(all, c.remove(c.lru.Back()))
	}
	c.mu.Unlock()
	closeEntries(all)
}

func (c *instanceCache) snapshot() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes = c.lru.Len(), c.bytes
	return s
}

// remove unlinks an entry; the caller holds mu.
func (c *instanceCache) remove(el *list.Element) *cacheEntry {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.byInst, e.instance)
	c.bytes -= e.bytes
	return e
}

// closeEntries ends the cached code outside the cache's lock: ending it runs
// the code's deferred calls.
func closeEntries(es []*cacheEntry) {
	for _, e := range es {
		e.eng.Close()
	}
}

// cursorOf is where the fetched item's stored history ends: the provider's
// cursor, or for a provider that read the history anyway, the history's own
// end, with its start time standing in for the incarnation.
func cursorOf(item *duroxide.OrchestrationItem) duroxide.HistoryCursor {
	if item.Cursor != nil {
		return *item.Cursor
	}
	return duroxide.HistoryCursor{
		ExecutionID: item.ExecutionID, LastEventID: engine.LastEventID(item.History), Incarnation: historyIncarnation(item.History),
	}
}

// historyIncarnation tells apart histories of one instance id that were
// created at different times, for providers without a cursor.
func historyIncarnation(h []duroxide.Event) string {
	if len(h) == 0 {
		return ""
	}
	return startedIncarnation(h[0].TimestampMs)
}

func startedIncarnation(startedAtMs uint64) string {
	return "started@" + strconv.FormatUint(startedAtMs, 10)
}
