package redisprovider

import (
	"testing"
	"time"
)

// A marker the waiter popped after its last fetcher left is put back with
// the expiry every marker has: BZPOPMIN deleted the key, and a marker
// recreated without one would outlive the class it wakes.
func TestRearmedMarkerExpires(t *testing.T) {
	m, p := newMiniProvider(t)
	key := p.Keys().WorkWake("d")
	w := &waiter{p: p, keys: []string{key}}
	w.rearm([]any{key, wakeMember, "0"})
	if !m.Exists(key) {
		t.Fatalf("marker %s not put back", key)
	}
	if ttl := m.TTL(key); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("marker %s put back with TTL %v, want (0, 1m]", key, ttl)
	}
	// a key outside the namespace is refused, not written
	w.rearm([]any{"elsewhere", wakeMember, "0"})
	if m.Exists("elsewhere") {
		t.Fatal("rearm wrote a key outside the namespace")
	}
}
