package durable

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// parked is a cached engine whose code waits on an activity, and a channel
// the code closes (deferred) when its goroutine ends: closing the engine
// must end it.
type parked struct {
	entry *cacheEntry
	ended chan struct{}
}

// parkedEntry runs the first turn of an execution whose input is input
// (its size sets the entry's bytes) and returns it ready for the cache, at
// cursor (1, last event id, "inc").
func parkedEntry(t *testing.T, instance, input string) parked {
	t.Helper()
	ended := make(chan struct{})
	start := duroxide.NewEvent(1, instance, 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: input})
	eng := engine.New(instance, 1, []duroxide.Event{start})
	item := &duroxide.OrchestrationItem{Instance: instance, ExecutionID: 1, OrchestrationName: "O", Version: "1.0.0"}
	code := engineFunc(func(ctx *OrchestrationContext, in string) (string, error) {
		defer close(ended)
		return ctx.ScheduleActivity("A", in).Get()
	})
	env := engine.Env{Clock: time.Now, Logger: slog.New(slog.DiscardHandler), ParentExecution: func(string) uint64 { return 1 }}
	commit, goesOn := eng.Turn(item, engine.ReadBatch(nil, eng.Info(), instance), semver.MustParse("1.0.0"), code, env)
	if !goesOn || !eng.Resumable() {
		t.Fatalf("first turn: %+v, resumable %v", commit, eng.Resumable())
	}
	cur := duroxide.HistoryCursor{ExecutionID: 1, LastEventID: eng.LastEventID(), Incarnation: "inc"}
	return parked{entry: &cacheEntry{instance: instance, cursor: cur, eng: eng}, ended: ended}
}

// size is what the entry counts against the byte bound.
func (p parked) size() int64 { return int64(p.entry.eng.Bytes()) }

// closed reports whether the entry's code has ended. A closed engine's
// goroutine is gone by the time close returns, so no wait is needed.
func (p parked) closed() bool {
	select {
	case <-p.ended:
		return true
	default:
		return false
	}
}

func wantClosed(t *testing.T, name string, p parked, want bool) {
	t.Helper()
	if p.closed() != want {
		t.Errorf("%s: code ended %v, want %v", name, p.closed(), want)
	}
}

func wantStats(t *testing.T, c *instanceCache, want CacheStats) {
	t.Helper()
	if got := c.snapshot(); got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

// hitAndReturn takes instance's entry at its own cursor and puts it back,
// as a turn that committed nothing new would: it becomes the most recent.
func hitAndReturn(t *testing.T, c *instanceCache, p parked) {
	t.Helper()
	e := c.take(p.entry.instance, p.entry.cursor)
	if e != p.entry {
		t.Fatalf("take %s: %v, want its entry", p.entry.instance, e)
	}
	c.put(e)
}

func TestCacheEvictsLeastRecentlyUsedByCount(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(2, 1<<30, time.Second)
	a, b, x := parkedEntry(t, "a", "in"), parkedEntry(t, "b", "in"), parkedEntry(t, "x", "in")
	c.put(a.entry)
	c.put(b.entry)
	hitAndReturn(t, c, a) // b is now the least recently used
	c.put(x.entry)
	wantClosed(t, "a", a, false)
	wantClosed(t, "b", b, true)
	wantClosed(t, "x", x, false)
	wantStats(t, c, CacheStats{Hits: 1, Evictions: 1, Entries: 2, Bytes: a.size() + x.size()})
	if e := c.take("b", b.entry.cursor); e != nil {
		t.Fatal("the evicted entry is still served")
	}
	wantStats(t, c, CacheStats{Hits: 1, Misses: 1, Evictions: 1, Entries: 2, Bytes: a.size() + x.size()})
}

func TestCacheEvictsLeastRecentlyUsedByBytes(t *testing.T) {
	t.Parallel()
	a, b, x := parkedEntry(t, "a", "in"), parkedEntry(t, "b", "in"), parkedEntry(t, "x", "in")
	// Room for two small entries, not three.
	c := newInstanceCache(100, 2*a.size()+a.size()/2, time.Second)
	c.put(a.entry)
	c.put(b.entry)
	hitAndReturn(t, c, a)
	c.put(x.entry)
	wantClosed(t, "a", a, false)
	wantClosed(t, "b", b, true)
	wantClosed(t, "x", x, false)
	wantStats(t, c, CacheStats{Hits: 1, Evictions: 1, Entries: 2, Bytes: a.size() + x.size()})

	// An entry that fits only alone pushes out every other one (its input
	// is counted twice: in the start and in the activity's schedule).
	big := parkedEntry(t, "big", strings.Repeat("z", int(a.size()/2+a.size()/8)))
	if bound := c.maxBytes; big.size() > bound || big.size()+a.size() <= bound {
		t.Fatalf("big entry of %d bytes does not fit the bound %d alone or fits with a small one (%d)", big.size(), bound, a.size())
	}
	c.put(big.entry)
	wantClosed(t, "a", a, true)
	wantClosed(t, "x", x, true)
	wantClosed(t, "big", big, false)
	wantStats(t, c, CacheStats{Hits: 1, Evictions: 3, Entries: 1, Bytes: big.size()})
}

func TestCacheDoesNotKeepAnEntryLargerThanItsByteBound(t *testing.T) {
	t.Parallel()
	small := parkedEntry(t, "small", "in")
	huge := parkedEntry(t, "huge", strings.Repeat("z", 4096))
	c := newInstanceCache(100, huge.size()-1, time.Second)
	c.put(small.entry)
	c.put(huge.entry)
	wantClosed(t, "huge", huge, true)
	wantClosed(t, "small", small, false) // making room for what cannot fit anyway would only lose it
	wantStats(t, c, CacheStats{Evictions: 1, Entries: 1, Bytes: small.size()})
	if c.take("huge", huge.entry.cursor) != nil {
		t.Fatal("an entry over the byte bound was kept")
	}
}

func TestCacheTakeWithMovedCursorEvictsAndMisses(t *testing.T) {
	t.Parallel()
	for name, move := range map[string]func(*duroxide.HistoryCursor){
		"execution id":  func(c *duroxide.HistoryCursor) { c.ExecutionID++ },
		"last event id": func(c *duroxide.HistoryCursor) { c.LastEventID++ },
		"incarnation":   func(c *duroxide.HistoryCursor) { c.Incarnation = "recreated" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newInstanceCache(10, 1<<30, time.Second)
			p := parkedEntry(t, "i", "in")
			c.put(p.entry)
			cur := p.entry.cursor
			move(&cur)
			if e := c.take("i", cur); e != nil {
				t.Fatal("a cursor that moved on hit")
			}
			wantClosed(t, "moved", p, true)
			wantStats(t, c, CacheStats{Misses: 1, Evictions: 1})
			if c.take("i", p.entry.cursor) != nil { // gone, even at its own cursor
				t.Fatal("the evicted entry is still served")
			}
			wantStats(t, c, CacheStats{Misses: 2, Evictions: 1})
		})
	}
}

func TestCacheTakeAtItsCursorHitsAndHandsTheEngineOver(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Second)
	p := parkedEntry(t, "i", "in")
	c.put(p.entry)
	if e := c.take("i", p.entry.cursor); e != p.entry {
		t.Fatalf("take at the cached cursor: %v", e)
	}
	wantClosed(t, "taken", p, false) // the turn runs it now
	wantStats(t, c, CacheStats{Hits: 1})
	if c.take("i", p.entry.cursor) != nil { // no two turns share an engine
		t.Fatal("a taken entry is served again")
	}
	wantStats(t, c, CacheStats{Hits: 1, Misses: 1})
	p.entry.eng.Close()
	wantClosed(t, "closed by its turn", p, true)
}

// An instance deleted and created again under the same id can reach the
// same execution and event id: only the incarnation tells them apart.
func TestCacheMissesAnotherIncarnationAtTheSameEvent(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Second)
	p := parkedEntry(t, "i", "in")
	c.put(p.entry)
	cur := p.entry.cursor
	cur.Incarnation = "recreated"
	if c.take("i", cur) != nil {
		t.Fatal("an entry of another incarnation hit")
	}
	wantClosed(t, "stale incarnation", p, true)
	wantStats(t, c, CacheStats{Misses: 1, Evictions: 1})
}

func TestCachePutOfACachedInstanceReplacesItsEntry(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Second)
	old, fresh := parkedEntry(t, "i", "in"), parkedEntry(t, "i", "longer input")
	c.put(old.entry)
	c.put(fresh.entry)
	wantClosed(t, "old", old, true)
	wantClosed(t, "fresh", fresh, false)
	wantStats(t, c, CacheStats{Evictions: 1, Entries: 1, Bytes: fresh.size()})
	if c.take("i", fresh.entry.cursor) != fresh.entry {
		t.Fatal("the newer entry is not the one served")
	}
}

func TestCacheDropEvictsOneInstance(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Second)
	a, b := parkedEntry(t, "a", "in"), parkedEntry(t, "b", "in")
	c.put(a.entry)
	c.put(b.entry)
	c.drop("a")
	c.drop("absent")
	wantClosed(t, "a", a, true)
	wantClosed(t, "b", b, false)
	wantStats(t, c, CacheStats{Evictions: 1, Entries: 1, Bytes: b.size()})
}

func TestCacheStopClosesEveryEntryAndKeepsNothingAfter(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Second)
	var ps []parked
	for _, id := range []string{"a", "b", "c"} {
		p := parkedEntry(t, id, "in")
		c.put(p.entry)
		ps = append(ps, p)
	}
	c.stop()
	for _, p := range ps {
		wantClosed(t, p.entry.instance, p, true)
	}
	wantStats(t, c, CacheStats{})
	late := parkedEntry(t, "late", "in") // a turn that ends after the runtime stopped
	c.put(late.entry)
	wantClosed(t, "late", late, true)
	wantStats(t, c, CacheStats{Evictions: 1})
}

func TestCacheOffKeepsNothing(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]*instanceCache{
		"entries": newInstanceCache(-1, 1<<30, time.Second),
		"bytes":   newInstanceCache(10, -1, time.Second),
	} {
		p := parkedEntry(t, "i", "in")
		if c.enabled() {
			t.Fatalf("%s: a negative bound leaves the cache on", name)
		}
		c.put(p.entry)
		wantClosed(t, name, p, true)
		if c.take("i", p.entry.cursor) != nil {
			t.Fatalf("%s: a cache that is off served an entry", name)
		}
		if s := c.snapshot(); s.Hits != 0 || s.Entries != 0 || s.Bytes != 0 {
			t.Fatalf("%s: stats %+v of a cache that is off", name, s)
		}
	}
}

func TestCacheOptionsDefaultsAndOff(t *testing.T) {
	t.Parallel()
	o := Options{}.withDefaults()
	if c := newInstanceCache(o.InstanceCacheEntries, o.InstanceCacheBytes, time.Second); !c.enabled() || c.maxEntries != 1000 || c.maxBytes != 256<<20 {
		t.Fatalf("default cache: %d entries, %d bytes, on %v", c.maxEntries, c.maxBytes, c.enabled())
	}
	o = Options{InstanceCacheEntries: -1}.withDefaults()
	if newInstanceCache(o.InstanceCacheEntries, o.InstanceCacheBytes, time.Second).enabled() {
		t.Fatal("InstanceCacheEntries -1 leaves the cache on")
	}
}

func TestCacheTakeWaitsForTheCommitOfATurnHere(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Minute)
	p := parkedEntry(t, "i", "in")
	done := c.commit("i")
	got := make(chan *cacheEntry, 1)
	go func() { got <- c.take("i", p.entry.cursor) }()
	c.put(p.entry) // the committing turn caches its engine, then lets go
	select {
	case e := <-got:
		t.Fatalf("take returned %v while the instance was still being committed", e)
	default:
	}
	done()
	select {
	case e := <-got:
		if e != p.entry {
			t.Fatalf("take after the commit: %v, want the engine it cached", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("take still waits after the commit ended")
	}
	wantStats(t, c, CacheStats{Hits: 1})
}

func TestCacheTakeWaitsForACommitAtMostMaxWait(t *testing.T) {
	t.Parallel()
	c := newInstanceCache(10, 1<<30, time.Millisecond)
	done := c.commit("i") // a commit that does not end in time (its ack hangs)
	got := make(chan *cacheEntry, 1)
	go func() { got <- c.take("i", duroxide.HistoryCursor{ExecutionID: 1, LastEventID: 2}) }()
	select {
	case e := <-got:
		if e != nil {
			t.Fatalf("take: %v, want a miss", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("take waits for a hung commit past maxWait")
	}
	wantStats(t, c, CacheStats{Misses: 1})
	// A later commit of the instance (another turn) is not undone by the
	// first one's end.
	second := c.commit("i")
	done()
	c.mu.Lock()
	_, waiting := c.committing["i"]
	c.mu.Unlock()
	second()
	if !waiting {
		t.Fatal("the end of an earlier commit ended a later one's")
	}
}
