package durable

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// OrchestrationFunc is an orchestration in its raw form: it receives the
// input string stored in history and returns the output string (or an error,
// which fails the instance with an OrchestrationFailed application error).
// It must be deterministic: everything non-deterministic goes through ctx.
type OrchestrationFunc func(ctx *OrchestrationContext, input string) (string, error)

// ActivityFunc is an activity in its raw form. Activities run on workers, may
// do anything, and see cancellation through ctx (a context.Context).
type ActivityFunc func(ctx *ActivityContext, input string) (string, error)

// DefaultVersion is the version an orchestration registered without one gets.
const DefaultVersion = "1.0.0"

// systemActivityPrefix marks duroxide's built-in activities (NewGUID, UTCNow,
// ValueFromInstance); user activities may not use it.
const systemActivityPrefix = "__duroxide_syscall:"

const (
	sysActivityNewGUID    = systemActivityPrefix + "new_guid"
	sysActivityUtcNowMs   = systemActivityPrefix + "utc_now_ms"
	sysActivityGetKVValue = systemActivityPrefix + "get_kv_value"
)

// Registry holds the orchestrations (by name and semver version) and the
// activities (by name) a Runtime can run. Register everything before passing
// it to NewRuntime; it is safe for concurrent reads afterwards.
type Registry struct {
	mu             sync.RWMutex
	orchestrations map[string][]versionedOrchestration // sorted by version, ascending
	activities     map[string]ActivityFunc
}

type versionedOrchestration struct {
	version *semver.Version
	fn      OrchestrationFunc
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		orchestrations: map[string][]versionedOrchestration{},
		activities:     map[string]ActivityFunc{},
	}
}

// AddOrchestration registers fn as version DefaultVersion of name.
func (r *Registry) AddOrchestration(name string, fn OrchestrationFunc) error {
	return r.AddOrchestrationVersion(name, DefaultVersion, fn)
}

// AddOrchestrationVersion registers fn as the given semver version of name.
// New instances started without a version run the latest registered version;
// an execution keeps the version it started with on every replay.
func (r *Registry) AddOrchestrationVersion(name, version string, fn OrchestrationFunc) error {
	const op = "register_orchestration"
	if name == "" || fn == nil {
		return invalidInput(op, "orchestration %q: empty name or nil function", name)
	}
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return invalidInput(op, "orchestration %q: version %q is not semver: %v", name, version, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.orchestrations[name]
	for _, e := range list {
		if e.version.Equal(v) {
			return duroxide.Errorf(op, duroxide.ErrConflict, "orchestration %q version %s is already registered", name, v)
		}
	}
	list = append(list, versionedOrchestration{version: v, fn: fn})
	sort.Slice(list, func(i, j int) bool { return list[i].version.LessThan(list[j].version) })
	r.orchestrations[name] = list
	return nil
}

// AddActivity registers fn under name.
func (r *Registry) AddActivity(name string, fn ActivityFunc) error {
	const op = "register_activity"
	if name == "" || fn == nil {
		return invalidInput(op, "activity %q: empty name or nil function", name)
	}
	if strings.HasPrefix(name, systemActivityPrefix) {
		return invalidInput(op, "activity %q: the prefix %q is reserved", name, systemActivityPrefix)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.activities[name]; dup {
		return duroxide.Errorf(op, duroxide.ErrConflict, "activity %q is already registered", name)
	}
	r.activities[name] = fn
	return nil
}

// ReplaceActivity swaps the function of the activity registered under
// name, for a test that stubs one activity (durabletest.Env.MockActivity).
// Executions that start afterwards run fn, also on a runtime already
// running on r; an activity that is not registered is an ErrNotFound error,
// so a misspelt name fails instead of adding an activity nobody calls.
func (r *Registry) ReplaceActivity(name string, fn ActivityFunc) error {
	const op = "replace_activity"
	if fn == nil {
		return duroxide.Errorf(op, duroxide.ErrInvalidInput, "activity %q: nil function", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.activities[name]; !ok {
		return duroxide.Errorf(op, duroxide.ErrNotFound, "activity %q is not registered", name)
	}
	r.activities[name] = fn
	return nil
}

// Clone returns a registry holding the same orchestrations and activities,
// whose later changes (ReplaceActivity, new registrations) do not reach r
// and the reverse: a test harness replaces activities in its clone while
// other tests keep sharing r.
func (r *Registry) Clone() *Registry {
	c := NewRegistry()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for name, list := range r.orchestrations {
		c.orchestrations[name] = append([]versionedOrchestration(nil), list...)
	}
	for name, fn := range r.activities {
		c.activities[name] = fn
	}
	return c
}

// MustAddOrchestration is AddOrchestration that panics on error, for
// registration code at program start.
func (r *Registry) MustAddOrchestration(name string, fn OrchestrationFunc) *Registry {
	must(r.AddOrchestration(name, fn))
	return r
}

// MustAddOrchestrationVersion is AddOrchestrationVersion that panics on error.
func (r *Registry) MustAddOrchestrationVersion(name, version string, fn OrchestrationFunc) *Registry {
	must(r.AddOrchestrationVersion(name, version, fn))
	return r
}

// MustAddActivity is AddActivity that panics on error.
func (r *Registry) MustAddActivity(name string, fn ActivityFunc) *Registry {
	must(r.AddActivity(name, fn))
	return r
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// latest returns the highest registered version of name.
func (r *Registry) latest(name string) (*semver.Version, OrchestrationFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	list := r.orchestrations[name]
	if len(list) == 0 {
		return nil, nil, false
	}
	e := list[len(list)-1]
	return e.version, e.fn, true
}

// exact returns version v of name.
func (r *Registry) exact(name string, v *semver.Version) (OrchestrationFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, e := range r.orchestrations[name] {
		if e.version.Equal(v) {
			return e.fn, true
		}
	}
	return nil, false
}

// resolve finds the handler for a start (version "" = latest) or a replay.
func (r *Registry) resolve(name, version string) (*semver.Version, OrchestrationFunc, bool) {
	if version == "" {
		return r.latest(name)
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return nil, nil, false
	}
	fn, ok := r.exact(name, v)
	return v, fn, ok
}

func (r *Registry) activity(name string) (ActivityFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	fn, ok := r.activities[name]
	return fn, ok
}

// Orchestration adapts a typed orchestration to an OrchestrationFunc: the
// input is decoded from JSON and the output encoded to JSON, as duroxide's
// typed registrations do.
func Orchestration[In, Out any](fn func(ctx *OrchestrationContext, in In) (Out, error)) OrchestrationFunc {
	return jsonAdapter(fn, "orchestration")
}

// Activity adapts a typed activity to an ActivityFunc (JSON in, JSON out).
func Activity[In, Out any](fn func(ctx *ActivityContext, in In) (Out, error)) ActivityFunc {
	return jsonAdapter(fn, "activity")
}

func jsonAdapter[C, In, Out any](fn func(C, In) (Out, error), what string) func(C, string) (string, error) {
	return func(ctx C, input string) (string, error) {
		in, err := decodeJSON[In](input)
		if err != nil {
			return "", &DecodeError{Kind: what + " input", Err: err}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		return encodeJSON(out)
	}
}

func encodeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func decodeJSON[T any](s string) (T, error) {
	var v T
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}
