package redisprovider

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// A marker the waiter popped after its last fetcher left is put back with
// the expiry every marker has: BZPOPMIN deleted the key, and a marker
// recreated without one would outlive the class it wakes.
func TestRearmedMarkerExpires(t *testing.T) {
	m, p := newMiniProvider(t)
	key := p.Keys().WorkWake("d")
	w := &waiter{p: p, keys: []string{key}}
	w.rearm(key)
	if !m.Exists(key) {
		t.Fatalf("marker %s not put back", key)
	}
	if ttl := m.TTL(key); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("marker %s put back with TTL %v, want (0, 1m]", key, ttl)
	}
	// a key outside the namespace is refused, not written
	w.rearm("elsewhere")
	if m.Exists("elsewhere") {
		t.Fatal("rearm wrote a key outside the namespace")
	}
}

// fetchClass is one kind of fetcher: its session routing and tag filter.
type fetchClass struct {
	session *duroxide.SessionFetchConfig
	tags    duroxide.TagFilter
}

func sessionOwner(owner string) *duroxide.SessionFetchConfig {
	return &duroxide.SessionFetchConfig{OwnerID: owner, LockTimeout: time.Minute}
}

// Fetchers of different classes wait in different waiters that share a wake
// key (the plain default queue). Two plain items enqueued while both sleep
// must reach both: a marker popped by one waiter while its fetcher was busy
// taking the first item must not be dropped when that fetcher leaves. The
// poll timeout is below the 10 s rerun, so a lost wake-up shows as a fetcher
// that returns nothing.
func TestFetchersOfDifferentClassesBothWake(t *testing.T) {
	const rounds = 40
	cases := map[string][2]fetchClass{
		"session owners": {
			{sessionOwner("o1"), duroxide.DefaultOnly()},
			{sessionOwner("o2"), duroxide.DefaultOnly()},
		},
		"tag filters": {
			{nil, duroxide.DefaultOnly()},
			{nil, duroxide.DefaultAndTags("x")},
		},
	}
	for name, classes := range cases {
		t.Run(name, func(t *testing.T) {
			for round := 0; round < rounds; round++ {
				_, p := newMiniProvider(t)
				if got := wakeBoth(t, p, classes); got != 2 {
					t.Fatalf("round %d: %d of 2 fetchers got an item", round, got)
				}
			}
		})
	}
}

// wakeBoth starts one long poll of p per class, enqueues two plain items once both
// sleep and returns how many of the polls got an item.
func wakeBoth(t *testing.T, p *Provider, classes [2]fetchClass) int {
	t.Helper()
	ctx := context.Background()
	got := make(chan *duroxide.LockedWorkItem, len(classes))
	var wg sync.WaitGroup
	for _, c := range classes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it, err := p.FetchWorkItem(ctx, time.Minute, 5*time.Second, c.session, c.tags)
			if err != nil {
				t.Error(err)
			}
			got <- it
		}()
	}
	waitSleeping(t, p, len(classes))
	for id := uint64(1); id <= 2; id++ {
		act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: id, Name: "a", Input: "x"}
		if err := p.EnqueueForWorker(ctx, act); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(got)
	n := 0
	for it := range got {
		if it != nil {
			n++
		}
	}
	return n
}

// waitSleeping returns once n fetchers of p sleep in a waiter, so work put
// after it must reach them through wake-up markers.
func waitSleeping(t *testing.T, p *Provider, n int) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(time.Millisecond) {
		if sleepingFetchers(p) == n {
			return
		}
	}
	t.Fatalf("%d fetchers never slept (now %d)", n, sleepingFetchers(p))
}

// sleepingFetchers counts the fetchers of p waiting for a wake-up.
func sleepingFetchers(p *Provider) int {
	p.waits.mu.Lock()
	defer p.waits.mu.Unlock()
	n := 0
	for _, w := range p.waits.m {
		w.mu.Lock()
		n += len(w.sleepers)
		w.mu.Unlock()
	}
	return n
}
