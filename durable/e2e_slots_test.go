package durable_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// A runtime with more activity slots than the provider's blocking pool has
// connections (128 by default), and no WorkerNodeID, so every slot is its
// own session owner, still picks up a new instance at once. Each owner's
// fetchers wait on a wake key of their own; if each owner parked its own
// connection, the slots would take the whole pool and the orchestration
// dispatchers' waiter would wait for one (about 2 s, up to 5 s per pickup,
// with nothing logged). On a real server the median pickup is held to the
// issue's goal, 10 ms (about 3 ms under the race detector); every pickup,
// and miniredis's (whose blocking calls are slower), only to a bound loose
// for a loaded machine and far below what the starved waiter takes. So is
// the median of a namespace of 12 partitions: each of the 300 slots' fetches
// long-polls 12 partitions, and under CI's load its median pickup was 54 ms
// (2 to 8 ms on an idle machine), a cost of partitioned fetching measured
// and left to the bench, not a starved waiter (which takes seconds).
func TestManySlotsDoNotStarveTheOrchestrationWaiter(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testManySlotsPickup)
}

func testManySlotsPickup(t *testing.T, backend durabletest.Backend) {
	const (
		slots   = 300
		pickups = 10
		bound   = time.Second
		goal    = 10 * time.Millisecond
	)
	picked := make(chan time.Time, 1)
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Pickup", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		if !ctx.IsReplaying() {
			select {
			case picked <- time.Now():
			default:
			}
		}
		return "", nil
	})
	// the default long poll: the slots stay parked between pickups
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), durabletest.WithOptions(durable.Options{WorkerConcurrency: slots}))
	if st := env.StartAndWait(t, "warm-up", "Pickup", ""); st.Status != durable.StatusCompleted {
		t.Fatalf("warm-up: %v %s", st.Status, st.FailureMessage())
	}
	<-picked
	var took []time.Duration
	for i := range pickups {
		start := time.Now()
		if err := env.Client.StartOrchestration(t.Context(), fmt.Sprint("pickup-", i), "Pickup", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case at := <-picked:
			took = append(took, at.Sub(start))
		case <-time.After(durabletest.DefaultWaitTimeout):
			t.Fatalf("instance %d never ran", i)
		}
	}
	slices.Sort(took)
	t.Logf("%d pickups with %d slots: median %v, max %v", pickups, slots, took[pickups/2], took[pickups-1])
	if took[pickups-1] > bound {
		t.Fatalf("pickups took %v, want each under %v", took, bound)
	}
	if backend.Name != "miniredis" && backend.Partitions <= 1 && took[pickups/2] > goal {
		t.Fatalf("pickups took %v, want a median under %v", took, goal)
	}
}
