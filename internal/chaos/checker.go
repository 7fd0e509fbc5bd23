package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Grace is how long a call may outlive its context deadline: fetch scripts
// keep running up to a second past the caller's deadline so that a lock they
// took is always known (redisprovider's detachGrace), plus scheduling slack.
const Grace = 1500 * time.Millisecond

// clockSlack absorbs the difference between the Redis clock (lock expiry) and
// this process's clock: both read the same machine's time.
const clockSlack = 50 * time.Millisecond

// Class is the outcome class of one provider call.
type Class int

// Outcome classes. Permanent errors other than a lost lock are never
// expected from the workloads of this package.
const (
	OK Class = iota
	Retryable
	Canceled  // the caller's context ended
	LockLost  // permanent lock_token error: the lock expired or was taken over
	Permanent // any other permanent error, or an error that is no *duroxide.ProviderError
	numClasses
)

var classNames = [numClasses]string{"ok", "retryable", "canceled", "lock_lost", "permanent"}

func (c Class) String() string { return classNames[c] }

// Classify sorts an error of a provider call into its Class.
func Classify(err error) Class {
	var pe *duroxide.ProviderError
	switch {
	case err == nil:
		return OK
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Canceled
	case !errors.As(err, &pe):
		return Permanent
	case pe.Retryable:
		return Retryable
	case errors.Is(err, duroxide.ErrLockLost):
		return LockLost
	}
	return Permanent
}

// lockHolding is what the checker knows about one lock: its lock expires at
// or after fetchStart+lock and at or before fetchEnd+lock (Redis stamps it
// while the fetch call is in flight).
type lockHolding struct {
	token      string
	fetchStart time.Time
	fetchEnd   time.Time
	released   time.Time // when a release (ack or abandon) was sent; zero: none
}

// Checker records what the dispatchers see and reports invariant violations.
// One Checker may outlive several Runtimes (a crashed process and the one
// that replaces it) and is safe for concurrent use.
type Checker struct {
	lock time.Duration

	mu         sync.Mutex
	violations []string
	calls      map[string]*[numClasses]int
	slowest    time.Duration // largest overrun of a call past its deadline
	holders    map[string]*lockHolding
	ledger     map[string][]duroxide.Event // events of orchestration acks that returned nil
	refused    map[string][]duroxide.Event // events of orchestration acks refused with a permanent error
	results    map[string]string           // activity key -> result of the worker ack that returned nil
	rejected   map[string]bool             // results of worker acks refused with a permanent error
	completed  map[string]int              // nil acks that completed each instance
	uncertain  map[string]bool             // instances whose completing ack failed: outcome unknown
}

// NewChecker returns a checker for dispatchers that lock for lock.
func NewChecker(lock time.Duration) *Checker {
	return &Checker{
		lock:      lock,
		calls:     map[string]*[numClasses]int{},
		holders:   map[string]*lockHolding{},
		ledger:    map[string][]duroxide.Event{},
		refused:   map[string][]duroxide.Event{},
		results:   map[string]string{},
		rejected:  map[string]bool{},
		completed: map[string]int{},
		uncertain: map[string]bool{},
	}
}

// Violationf records a broken invariant.
func (c *Checker) Violationf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

// Violations returns the broken invariants seen so far.
func (c *Checker) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

// Call records the outcome of one provider call that started at start with
// a context deadline of timeout, and returns its class. A call that overran
// its deadline by more than Grace, or a permanent error other than a lost
// lock (or one on an operation that takes no lock), is a violation.
func (c *Checker) Call(op string, start time.Time, timeout time.Duration, err error) Class {
	class := Classify(err)
	over := time.Since(start) - timeout
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := c.calls[op]
	if counts == nil {
		counts = new([numClasses]int)
		c.calls[op] = counts
	}
	counts[class]++
	if over > c.slowest {
		c.slowest = over
	}
	if over > Grace {
		c.violations = append(c.violations, fmt.Sprintf("%s returned %v after its deadline (error: %v)", op, over, err))
	}
	if class == Permanent || (class == LockLost && !takesToken(op)) {
		c.violations = append(c.violations, fmt.Sprintf("%s: unexpected permanent error: %v", op, err))
	}
	return class
}

// takesToken reports whether op is called with a lock token.
func takesToken(op string) bool {
	return strings.HasPrefix(op, "ack_") || strings.HasPrefix(op, "abandon_") || strings.HasPrefix(op, "renew_")
}

// Counts returns how many calls of op ended in class.
func (c *Checker) Counts(op string, class Class) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if counts := c.calls[op]; counts != nil {
		return counts[class]
	}
	return 0
}

// Summary describes the calls seen, for the test log.
func (c *Checker) Summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := make([]string, 0, len(c.calls))
	for op := range c.calls {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "%-30s", op)
		for cl, n := range c.calls[op] {
			if n > 0 {
				fmt.Fprintf(&b, " %s=%d", Class(cl), n)
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "largest overrun past a deadline: %v", c.slowest)
	return b.String()
}

// Fetched records that token locked key (an instance, or "activity:" plus an
// activity key) during a fetch call that ran from start to end. A previous
// holder whose lock had surely not expired and that had not started to
// release it means two holders at once.
func (c *Checker) Fetched(key, token string, start, end time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.holders[key]; prev != nil {
		unreleased := prev.released.IsZero() || prev.released.After(end)
		if unreleased && end.Add(clockSlack).Before(prev.fetchStart.Add(c.lock)) {
			c.violations = append(c.violations, fmt.Sprintf(
				"%s held by two lock holders: %s (fetched %s, lock runs at least until %s, not released) and %s (fetched by %s)",
				key, prev.token, stamp(prev.fetchStart), stamp(prev.fetchStart.Add(c.lock)), token, stamp(end)))
		}
	}
	c.holders[key] = &lockHolding{token: token, fetchStart: start, fetchEnd: end}
}

// Releasing records that the holder of token sends an ack or abandon for key
// now. It returns the time after which its lock has surely expired.
func (c *Checker) Releasing(key, token string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.holders[key]
	if h == nil || h.token != token {
		return time.Time{}
	}
	if h.released.IsZero() {
		h.released = time.Now()
	}
	return h.fetchEnd.Add(c.lock + clockSlack)
}

// Acked records an orchestration ack that returned nil: its events must be in
// history afterwards, exactly as sent.
func (c *Checker) Acked(inst string, commit duroxide.OrchestrationCommit, completes bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ledger[inst] = append(c.ledger[inst], commit.HistoryDelta...)
	if completes {
		c.completed[inst]++
		if c.completed[inst] > 1 {
			c.violations = append(c.violations, fmt.Sprintf("%s completed by %d acks", inst, c.completed[inst]))
		}
	}
}

// Refused records an orchestration ack whose first attempt failed with a
// permanent error: none of its events may be stored.
func (c *Checker) Refused(inst string, events []duroxide.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused[inst] = append(c.refused[inst], events...)
}

// WorkRefused records the result of a worker ack whose first attempt failed
// with a permanent error: it may not be recorded.
func (c *Checker) WorkRefused(result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rejected[result] = true
}

// Uncertain records that the completing ack of inst failed: it may or may not
// have been applied.
func (c *Checker) Uncertain(inst string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uncertain[inst] = true
}

// WorkAcked records a worker ack that returned nil with result.
func (c *Checker) WorkAcked(key, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.results[key]; ok {
		c.violations = append(c.violations, fmt.Sprintf("activity %s acked twice: %q and %q", key, prev, result))
		return
	}
	c.results[key] = result
}

// Completed reports how many instances a nil ack completed.
func (c *Checker) Completed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.completed)
}

// pending returns the instances of ids no nil ack completed, and whether each
// one's completion is uncertain.
func (c *Checker) pending(ids []string) map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for _, id := range ids {
		if c.completed[id] == 0 {
			out[id] = c.uncertain[id]
		}
	}
	return out
}

// stamp formats a time for violation messages.
func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// activityKey names one activity of one execution.
func activityKey(inst string, exec, id uint64) string {
	return fmt.Sprintf("%s/%d/%d", inst, exec, id)
}
