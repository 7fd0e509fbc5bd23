package durabletest

import (
	"os"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// EnvAckFetch set to "off" makes every Env hide the provider's optional
// ack-and-fetch calls, as WithAckFetch(false) does unless a test says
// otherwise, so a whole suite can be run
// on the runtime's plain ack-then-fetch path without editing its tests.
const EnvAckFetch = "DUROXIDE_ACK_FETCH"

// WithAckFetch(false) hides the provider's optional duroxide.WorkAckFetcher
// and duroxide.OrchestrationAckFetcher from the Env's runtimes (its own and
// those of Env.NewRuntime), so they ack and fetch in two calls; it applies
// after WithProviderWrapper's wrap. WithAckFetch(true) keeps them visible
// whatever EnvAckFetch says, for tests of the combined path itself.
func WithAckFetch(on bool) Option { return func(c *config) { c.plain = !on } }

// PlainProvider hides every optional interface of the provider it embeds:
// only duroxide.Provider's methods are visible through it.
type PlainProvider struct{ duroxide.Provider }

// ackFetchOff reports whether the environment turns ack-and-fetch off.
func ackFetchOff() bool { return os.Getenv(EnvAckFetch) == "off" }

// runtimeProvider is what a runtime of the Env sees of p.
func (c *config) runtimeProvider(p duroxide.Provider) duroxide.Provider {
	if c.wrap != nil {
		p = c.wrap(p)
	}
	if c.plain {
		p = plain(p)
	}
	return p
}

// The plain variants keep what is no fast path of the runtime: the
// schedule store (without it the Env's client could not create schedules)
// and the checked enqueue of a client's own calls (without it the Env's
// client would start an instance twice, and drop request ids); with a
// provider that has them all (redisprovider), also pausing, the
// pending-start notes and flow control, without which the Env's client
// could not pause an instance, say why a start waits or set a limit.
type (
	managedPlainProvider struct {
		PlainProvider
		duroxide.ScheduleStore
		duroxide.CheckedEnqueuer
		duroxide.InstancePauser
		duroxide.PendingStartNoter
		duroxide.FlowController
	}
	scheduledPlainProvider struct {
		PlainProvider
		duroxide.ScheduleStore
	}
	checkedPlainProvider struct {
		PlainProvider
		duroxide.CheckedEnqueuer
	}
	scheduledCheckedPlainProvider struct {
		PlainProvider
		duroxide.ScheduleStore
		duroxide.CheckedEnqueuer
	}
)

// plain hides p's ack-and-fetch calls and the runtime's other fast paths:
// PlainProvider, keeping duroxide.ScheduleStore and duroxide.CheckedEnqueuer
// when p has them, and duroxide.InstancePauser, duroxide.PendingStartNoter
// and duroxide.FlowController too when it has all five.
func plain(p duroxide.Provider) duroxide.Provider {
	s, scheduled := p.(duroxide.ScheduleStore)
	c, checked := p.(duroxide.CheckedEnqueuer)
	pz, pausable := p.(duroxide.InstancePauser)
	n, notes := p.(duroxide.PendingStartNoter)
	f, flow := p.(duroxide.FlowController)
	switch {
	case scheduled && checked && pausable && notes && flow:
		return managedPlainProvider{PlainProvider{p}, s, c, pz, n, f}
	case scheduled && checked:
		return scheduledCheckedPlainProvider{PlainProvider{p}, s, c}
	case scheduled:
		return scheduledPlainProvider{PlainProvider{p}, s}
	case checked:
		return checkedPlainProvider{PlainProvider{p}, c}
	}
	return PlainProvider{p}
}
