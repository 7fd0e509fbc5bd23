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

// scheduledPlainProvider is a PlainProvider that keeps the schedule store:
// schedules are no fast path of the runtime, and without them the Env's
// client could not create any.
type scheduledPlainProvider struct {
	PlainProvider
	duroxide.ScheduleStore
}

// plain hides p's ack-and-fetch calls: PlainProvider, keeping
// duroxide.ScheduleStore when p has it.
func plain(p duroxide.Provider) duroxide.Provider {
	if s, ok := p.(duroxide.ScheduleStore); ok {
		return scheduledPlainProvider{PlainProvider{p}, s}
	}
	return PlainProvider{p}
}
