package durable

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ShutdownError is what Shutdown returns when its context ends before the
// in-flight work does. errors.Is(err, context.DeadlineExceeded) (or
// context.Canceled) classifies it through Err.
type ShutdownError struct {
	// Err is the context's error.
	Err error
	// Abandoned is the work Shutdown handed back unfinished.
	Abandoned []AbandonedWork
}

// Error names the context's error and the work handed back.
func (e *ShutdownError) Error() string {
	if len(e.Abandoned) == 0 {
		return "durable: shutdown: " + e.Err.Error()
	}
	parts := make([]string, len(e.Abandoned))
	for i, w := range e.Abandoned {
		parts[i] = w.String()
	}
	return fmt.Sprintf("durable: shutdown: %v: abandoned %d in-flight: %s", e.Err, len(e.Abandoned), strings.Join(parts, "; "))
}

// Unwrap returns the context's error.
func (e *ShutdownError) Unwrap() error { return e.Err }

// WorkKind says whether abandoned work is an activity or a turn.
type WorkKind string

// The kinds of work Shutdown hands back.
const (
	WorkActivity      WorkKind = "activity"
	WorkOrchestration WorkKind = "orchestration"
)

// AbandonedWork is one activity or orchestration turn that Shutdown handed
// back unfinished.
type AbandonedWork struct {
	Kind        WorkKind
	Instance    string
	ExecutionID uint64
	// Name is the activity's, or the orchestration's.
	Name string
	// ActivityID is the activity's schedule event id (activities only).
	ActivityID uint64
	// Released reports that the lock was abandoned, so the work can be
	// fetched again at once; false means the abandon failed and the lock is
	// left to expire.
	Released bool
}

// String describes the work in one line.
func (w AbandonedWork) String() string {
	what := fmt.Sprintf("%s %s of %s (execution %d)", w.Kind, w.Name, w.Instance, w.ExecutionID)
	if w.Kind == WorkActivity {
		what = fmt.Sprintf("activity %s #%d of %s (execution %d)", w.Name, w.ActivityID, w.Instance, w.ExecutionID)
	}
	if w.Released {
		return what + ", lock released"
	}
	return what + ", lock left to expire"
}

// handBackTimeout bounds how long Shutdown, once its context has ended,
// spends abandoning the work still in flight (one round trip each, made
// together).
const handBackTimeout = 250 * time.Millisecond

// inflightUnit is a turn or an activity a dispatcher is running.
type inflightUnit struct {
	work    AbandonedWork
	abandon func(context.Context) error // hands the lock back, attempt not counted
	settled atomic.Bool
}

// settle claims the unit's lock for whoever ends it, its dispatcher or
// Shutdown; only the first caller may ack or abandon it.
func (u *inflightUnit) settle() bool { return u.settled.CompareAndSwap(false, true) }

// inflightSet is the runtime's running turns and activities.
type inflightSet struct {
	mu    sync.Mutex
	units map[*inflightUnit]struct{}
}

// track registers work until the returned func is called.
func (s *inflightSet) track(work AbandonedWork, abandon func(context.Context) error) (*inflightUnit, func()) {
	u := &inflightUnit{work: work, abandon: abandon}
	s.mu.Lock()
	if s.units == nil {
		s.units = map[*inflightUnit]struct{}{}
	}
	s.units[u] = struct{}{}
	s.mu.Unlock()
	return u, func() {
		s.mu.Lock()
		delete(s.units, u)
		s.mu.Unlock()
	}
}

// unsettled claims every registered unit no one has settled yet.
func (s *inflightSet) unsettled() []*inflightUnit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*inflightUnit
	for u := range s.units {
		if u.settle() {
			out = append(out, u)
		}
	}
	return out
}

// handBack abandons, concurrently, every unit still in flight that its
// dispatcher has not settled, and reports them; work whose lock was already
// gone (its dispatcher finished it meanwhile, or it was cancelled) is not
// reported. It returns once the abandons are answered or handBackTimeout
// has passed: a unit not answered by then is reported unreleased.
func (r *Runtime) handBack() []AbandonedWork {
	ctx, cancel := context.WithTimeout(context.Background(), handBackTimeout)
	defer cancel()
	units := r.inflight.unsettled()
	type answer struct {
		i   int
		err error
	}
	answers := make(chan answer, len(units))
	for i, u := range units {
		go func() { answers <- answer{i, u.abandon(ctx)} }()
	}
	work := make([]AbandonedWork, len(units))
	gone := make([]bool, len(units)) // the lock was no longer ours
	for i, u := range units {
		work[i] = u.work
	}
collect:
	for range units {
		select {
		case a := <-answers:
			work[a.i].Released = a.err == nil
			gone[a.i] = isLockLost(a.err)
		case <-ctx.Done():
			break collect
		}
	}
	var out []AbandonedWork
	for i, w := range work {
		if !gone[i] {
			out = append(out, w)
		}
	}
	return out
}
