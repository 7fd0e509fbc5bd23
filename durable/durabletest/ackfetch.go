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
		p = PlainProvider{p}
	}
	return p
}
