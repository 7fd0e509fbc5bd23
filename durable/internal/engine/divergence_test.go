package engine

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// TestDescribeFollowsPointers: the replayer shows events to people, so
// pointer fields show their values (not addresses) and unset ones nothing.
func TestDescribeFollowsPointers(t *testing.T) {
	t.Parallel()
	status, session := "step2", "s1"
	for _, c := range []struct {
		kind duroxide.EventKind
		want string
	}{
		{duroxide.CustomStatusUpdatedEvent{Status: &status}, `CustomStatusUpdated{Status:"step2"}`},
		{duroxide.CustomStatusUpdatedEvent{}, `CustomStatusUpdated{}`},
		{duroxide.ActivityScheduledEvent{Name: "Echo", Input: "x", SessionID: &session}, `ActivityScheduled{Name:"Echo" Input:"x" SessionID:"s1"}`},
		{duroxide.OrchestrationFailedEvent{Details: nondeterminism("m")}, `OrchestrationFailed{Details:{Configuration:{Kind:"Nondeterminism" Resource:"" Message:"m"}}}`},
	} {
		if got := Describe(c.kind); got != c.want {
			t.Errorf("Describe = %s, want %s", got, c.want)
		}
	}
}
