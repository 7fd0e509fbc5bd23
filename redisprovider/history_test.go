package redisprovider

import (
	"context"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Read resolves the latest execution exactly where the executions index
// cannot: 9999999999999999999 and 10^19 have the same double score, and the
// member order of a tie (reverse lexical) would put the smaller first.
func TestReadLatestOfTiedScores(t *testing.T) {
	_, p := newMiniProvider(t)
	ctx := context.Background()
	const lower, higher = uint64(9999999999999999999), uint64(10000000000000000000)
	for _, x := range []uint64{higher, lower} {
		ev := duroxide.NewEvent(1, "i", x, nil, duroxide.ExternalEventEvent{Name: "e", Data: `"x"`})
		if err := p.AppendWithExecution(ctx, "i", x, []duroxide.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := p.Read(ctx, "i")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].ExecutionID != higher {
		t.Fatalf("Read = %+v, want the one event of execution %d", events, higher)
	}
}
