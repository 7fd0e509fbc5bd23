package durabletest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
)

// TestDurabletestPartitionedNamespaceSkipsTimeAcrossPartitions: on a
// namespace of 4 partitions, a parent whose children have explicit ids (so
// they live in other partitions, reached through the outbox and the relay)
// and wait an hour each completes through Wait alone: time skipping sees
// every partition, and waits while a message is in an outbox.
func TestDurabletestPartitionedNamespaceSkipsTimeAcrossPartitions(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, in string) (string, error) {
		if _, err := ctx.Timer(time.Hour).Get(); err != nil {
			return "", err
		}
		return in + "!", nil
	})
	reg.MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
		var kids []durable.Future[string]
		for i := range 6 {
			kids = append(kids, ctx.ScheduleSubOrchestration("Child", fmt.Sprint(i), durable.WithInstanceID(fmt.Sprint("kid-", i))))
		}
		var out []string
		for _, k := range kids {
			s, err := k.Get()
			if err != nil {
				return "", err
			}
			out = append(out, s)
		}
		return strings.Join(out, ","), nil
	})
	b := durabletest.Miniredis()
	b.Partitions = 4
	env := durabletest.Start(t, reg, durabletest.WithBackend(b))
	parts := map[int]bool{}
	for i := range 6 {
		parts[env.Provider.PartitionOf(fmt.Sprint("kid-", i))] = true
	}
	if parts[env.Provider.PartitionOf("parent")] && len(parts) == 1 {
		t.Fatal("every child is in the parent's partition: the test would not cross partitions")
	}
	st := env.StartAndWait(t, "parent", "Parent", "")
	if st.Status != durable.StatusCompleted || st.Output != "0!,1!,2!,3!,4!,5!" {
		t.Fatalf("status %v output %q %s", st.Status, st.Output, st.FailureMessage())
	}
}
