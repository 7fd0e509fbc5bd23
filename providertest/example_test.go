package providertest_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/providertest"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// ExampleRun validates a provider from a test of its package. Run needs the
// *testing.T that only go test creates, so this example is compiled, not
// executed; this module's own TestMiniredis (validation_test.go) runs the
// same call with every optional hook (CorruptHistory, StoredKeys, Advance).
func ExampleRun() {
	testProvider := func(t *testing.T) {
		providertest.Run(t, providertest.Harness{
			// Each case gets a provider holding no state.
			New: func(t *testing.T) duroxide.Provider {
				m := miniredis.RunT(t)
				p, err := redisprovider.New(context.Background(), redisprovider.Options{URL: "redis://" + m.Addr() + "/0"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				return p
			},
		})
	}
	_ = testProvider // func TestProvider(t *testing.T) { testProvider(t) }
}
