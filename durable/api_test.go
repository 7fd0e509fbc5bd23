package durable_test

import (
	"errors"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

type point struct{ X, Y int }

// The typed forms carry structs through a Go block, an event raised with
// RaiseEventJSON and the KV store.
func TestTypedFormsRoundTripStructs(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	reg.MustAddOrchestration("Typed", durable.Orchestration(func(ctx *durable.OrchestrationContext, _ string) (point, error) {
		doubled := durable.Go(ctx, func(ctx *durable.OrchestrationContext) (point, error) {
			p, err := durable.WaitForEvent[point](ctx, "p").Get()
			return point{p.X * 2, p.Y * 2}, err
		})
		p, err := doubled.Get()
		if err != nil {
			return point{}, err
		}
		durable.SetValue(ctx, "last", p)
		v, ok, err := durable.Value[point](ctx, "last")
		if err != nil || !ok {
			return point{}, errors.Join(err, errors.New("value not read back"))
		}
		return v, nil
	}))
	env := durabletest.Start(t, reg)
	if err := env.Client.StartOrchestration(t.Context(), "typed", "Typed", `""`); err != nil {
		t.Fatal(err)
	}
	env.WaitForEventSubscription(t, "typed", "p")
	if err := env.Client.RaiseEventJSON(t.Context(), "typed", "p", point{1, 2}); err != nil {
		t.Fatal(err)
	}
	var got point
	st := env.Wait(t, "typed")
	if err := st.DecodeOutput(&got); err != nil || got != (point{2, 4}) {
		t.Fatalf("output %q %v: %+v", st.Output, err, got)
	}
}

// A client on a provider without management still has an Admin, whose every
// call says why it cannot answer.
func TestAdminWithoutManagement(t *testing.T) {
	t.Parallel()
	env := durabletest.Start(t, durable.NewRegistry())
	c := durable.NewClient(durabletest.PlainProvider{Provider: noAdminProvider{env.Provider}})
	if _, err := c.Admin().ListInstances(t.Context()); !errors.Is(err, durable.ErrNoManagement) {
		t.Fatalf("ListInstances: %v", err)
	}
	if _, err := durable.NewClient(env.Provider).Admin().ListInstances(t.Context()); err != nil {
		t.Fatalf("the Redis provider's admin: %v", err)
	}
}

// noAdminProvider is a provider without the management capability.
type noAdminProvider struct{ duroxide.Provider }

func (noAdminProvider) Admin() duroxide.ProviderAdmin { return nil }
