package durabletest_test

import (
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The "Flow control at dispatch" block of docs/flow-control.md, verbatim
// (the repository root's docblocks_test.go checks it).

func TestLimitChargesAndMail(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	ctx := t.Context()

	err := env.Client.SetLimit(ctx, duroxide.Limit{Name: "ChargeCard", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	err = env.Client.SetLimit(ctx, duroxide.Limit{Name: "SendMail", RatePerSecond: 50, Burst: 10})

	if err != nil {
		t.Fatal(err)
	}
	ls, err := env.Client.Limits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []duroxide.Limit{{Kind: duroxide.ActivityName, Name: "ChargeCard", Concurrency: 3}, {Kind: duroxide.ActivityName, Name: "SendMail", RatePerSecond: 50, Burst: 10}}
	if len(ls) != 2 || ls[0] != want[0] || ls[1] != want[1] {
		t.Fatalf("Limits = %+v, want %+v", ls, want)
	}
}
