package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// noteSignal passes the runtime's calls to the provider and signals each
// pending-start note the runtime writes. It forwards duroxide.PendingStartNoter
// from the provider under it (durabletest may hand it the provider with its
// ack-and-fetch calls hidden, durabletest.PlainProvider).
type noteSignal struct {
	duroxide.Provider
	noter duroxide.PendingStartNoter
	notes chan struct{}
}

func newNoteSignal(p duroxide.Provider) *noteSignal {
	inner := p
	if plain, ok := p.(durabletest.PlainProvider); ok {
		inner = plain.Provider
	}
	return &noteSignal{Provider: p, noter: inner.(duroxide.PendingStartNoter), notes: make(chan struct{}, 1)}
}

func (n *noteSignal) AbandonOrchestrationItemWithNote(ctx context.Context, token string, delay time.Duration, ignore bool, note duroxide.PendingStart) error {
	err := n.noter.AbandonOrchestrationItemWithNote(ctx, token, delay, ignore, note)
	select {
	case n.notes <- struct{}{}:
	default: // nobody waits: the note is in Redis for whoever reads later
	}
	return err
}

func (n *noteSignal) PendingStart(ctx context.Context, instance string) (*duroxide.PendingStart, error) {
	return n.noter.PendingStart(ctx, instance)
}

func (n *noteSignal) ListPendingStarts(ctx context.Context, limit int) ([]duroxide.PendingStart, error) {
	return n.noter.ListPendingStarts(ctx, limit)
}

// waitPending reads the instance's status until it is Pending, reading
// again each time the runtime writes a note, and returns the last status
// after a few seconds: the point is that the cause shows at once, not after
// the ~5 minutes to poison.
func waitPending(t *testing.T, c *durable.Client, sig *noteSignal, instance string) durable.OrchestrationStatus {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		st, err := c.Status(t.Context(), instance)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == durable.StatusPending {
			return st
		}
		select {
		case <-sig.notes:
		case <-deadline:
			return st
		}
	}
}

// A start no runtime can run is visible within seconds, with its cause, in
// Status and in a wait's timeout, instead of "NotFound" until it is poisoned
// (with duroxide's default backoff, after about 5 minutes).
func TestE2EUnregisteredStartShowsAsPendingWithItsCause(t *testing.T) {
	t.Parallel()
	durabletest.Each(t, testE2EUnregisteredStartShowsAsPendingWithItsCause)
}

func testE2EUnregisteredStartShowsAsPendingWithItsCause(t *testing.T, backend durabletest.Backend) {
	reg := durable.NewRegistry().MustAddOrchestration("Known", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil })
	var sig *noteSignal
	env := durabletest.Start(t, reg, durabletest.WithBackend(backend), // duroxide's default backoff and MaxAttempts
		// the wrapper's notes would be hidden by the plain provider (EnvAckFetch)
		durabletest.WithAckFetch(true),
		durabletest.WithProviderWrapper(func(p duroxide.Provider) duroxide.Provider {
			sig = newNoteSignal(p)
			return sig
		}))
	ctx := t.Context()
	if err := env.Client.StartOrchestration(ctx, "ghost", "Ghost", "in"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.StartOrchestration(ctx, "future", "Known", "in", durable.WithVersion("9.9.9")); err != nil {
		t.Fatal(err)
	}
	for instance, cause := range map[string]string{
		"ghost":  "orchestration Ghost (version any) is not registered in the runtimes that fetched it",
		"future": "orchestration Known (version 9.9.9) is not registered in the runtimes that fetched it",
	} {
		st := waitPending(t, env.Client, sig, instance)
		if st.Status != durable.StatusPending || st.Pending == nil {
			t.Fatalf("%s: status %v %+v, want Pending with a reason", instance, st.Status, st.Pending)
		}
		if want := "pending start: " + cause + " (attempt "; !strings.HasPrefix(st.Pending.Message(), want) || !strings.HasSuffix(st.Pending.Message(), " of 10)") {
			t.Errorf("%s: %q, want %q...", instance, st.Pending.Message(), want)
		}
		if st.IsTerminal() || st.Status.String() != "Pending" {
			t.Errorf("%s: Pending is %q, terminal %v", instance, st.Status, st.IsTerminal())
		}
		_, err := env.Client.WaitForOrchestration(ctx, instance, time.Millisecond)
		var te *durable.WaitTimeoutError
		if !errors.As(err, &te) || !errors.Is(err, durable.ErrTimeout) || !strings.Contains(err.Error(), "last status Pending: pending start: "+cause) {
			t.Errorf("%s: wait: %v, want a timeout naming the cause", instance, err)
		}
	}
	// the instance has no record or history meanwhile, as in duroxide
	if _, err := env.Client.Admin().GetInstanceInfo(ctx, "ghost"); !errors.Is(err, duroxide.ErrNotFound) {
		t.Errorf("ghost has a record while pending: %v", err)
	}
	if h := read(t, env, "ghost"); len(h) != 0 {
		t.Errorf("ghost has history while pending: %v", h)
	}
}
