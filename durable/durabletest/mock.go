package durabletest

import (
	"slices"
	"sync"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// ActivityMock records the executions of an activity MockActivity replaced.
type ActivityMock struct {
	mu     sync.Mutex
	inputs []string
}

// Calls is how many times the mock ran (every attempt of a retried activity
// counts).
func (m *ActivityMock) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.inputs)
}

// Inputs are the raw inputs (JSON for typed activities) of the mock's
// executions, in the order they started.
func (m *ActivityMock) Inputs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.inputs)
}

// MockActivity replaces the activity registered as name with fn in this
// Env's runtime, for executions that start from now on, and records each
// call. Typed stubs go through durable.Activity like registrations:
//
//	charge := env.MockActivity("ChargeCard", durable.Activity(func(_ *durable.ActivityContext, o Order) (string, error) {
//		return "test-receipt", nil
//	}))
//	...
//	if charge.Calls() != 1 { ... }
//
// Only the Env's copy of the registry changes (see Start): the registry the
// test passed to Start, other tests sharing it and runtimes from NewRuntime
// keep the real activity. A name that is not registered, or a nil fn, fails
// the test.
func (e *Env) MockActivity(name string, fn durable.ActivityFunc) *ActivityMock {
	e.t.Helper()
	m := &ActivityMock{}
	var wrapped durable.ActivityFunc
	if fn != nil {
		wrapped = func(ctx *durable.ActivityContext, input string) (string, error) {
			m.mu.Lock()
			m.inputs = append(m.inputs, input)
			m.mu.Unlock()
			return fn(ctx, input)
		}
	}
	if err := e.reg.ReplaceActivity(name, wrapped); err != nil {
		e.t.Fatalf("durabletest: mock activity: %v", err)
	}
	return m
}
