package redisprovider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Long polling.
//
// Scripts that make work eligible set a one-member marker on the wake key of
// each class of fetcher that can take it (a tag queue, an owner's sessions, a
// capability filter). A fetch that finds nothing joins the process-wide
// waiter of its set of wake keys. That waiter parks one connection in
// BZPOPMIN on those keys and wakes every local fetcher when a marker arrives
// or the connection fails; they then run their fetch script again. An empty
// fetch also learns when the next delayed item, timer or lock expiry is due
// and sleeps no longer than that; a due time that appears while fetchers
// sleep arms their markers (lua/lib_util.lua, U.due). A fetcher that takes
// work while more is eligible puts the marker back, so a burst is spread over
// every waiter of every process.
//
// A fetch call that finds its waiter idle and nothing changed since the last
// empty fetch (no wake, no due time passed, and that fetch recent) does not
// run its script: an idle fetcher costs one BZPOPMIN per maxBlock.

const (
	// maxBlock caps one BZPOPMIN: Redis is asked again at least this often,
	// and a failover is noticed within it even without a connection error.
	maxBlock = 10 * time.Second
	// trustIdle is how long an empty fetch vouches for the state: after it
	// the next fetch runs its script, which also refreshes the capability
	// filter registration the scripts use to route wake-ups.
	trustIdle = 30 * time.Second
	// retryPause spaces the waiter's attempts while Redis fails.
	retryPause = 200 * time.Millisecond
)

// tryFunc runs a fetch script once. found reports taken work; otherwise due is
// how long until something the caller may take becomes eligible (< 0: nothing
// scheduled).
type tryFunc func(ctx context.Context) (found bool, due time.Duration, err error)

// poll runs try until it finds work, pollTimeout passes or ctx ends. With a
// zero pollTimeout it runs try exactly once.
func (p *Provider) poll(ctx context.Context, keys []string, pollTimeout time.Duration, try tryFunc) error {
	if pollTimeout <= 0 {
		_, _, err := try(ctx)
		return err
	}
	deadline := time.NewTimer(pollTimeout)
	defer deadline.Stop()
	w := p.waits.join(keys)
	defer p.waits.leave(w)
	for {
		wake, fresh := w.watch()
		if !fresh {
			found, due, err := try(ctx)
			if err != nil || found {
				return err
			}
			w.idle(wake, due)
		}
		// every fetcher times its own due work: the blocked BZPOPMIN cannot
		// be shortened once sent
		if done, err := w.sleep(ctx, wake, deadline.C); done {
			return err
		}
	}
}

// sleep waits for a wake-up, the fetcher's due time, its deadline, ctx or
// Close. done reports that the fetch must return (with err).
func (w *waiter) sleep(ctx context.Context, wake <-chan struct{}, deadline <-chan time.Time) (done bool, err error) {
	var dueC <-chan time.Time
	if at := w.dueAt(); !at.IsZero() {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		dueC = t.C
	}
	select {
	case <-wake:
	case <-dueC:
	case <-deadline:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	case <-w.p.closed:
		return true, nil
	}
	return false, nil
}

// waitRegistry holds the process's waiters, one per set of wake keys.
type waitRegistry struct {
	p  *Provider
	mu sync.Mutex
	m  map[string]*waiter
}

func newWaitRegistry(p *Provider) *waitRegistry {
	return &waitRegistry{p: p, m: make(map[string]*waiter)}
}

// join registers a fetcher with the waiter of keys, starting it if needed.
func (r *waitRegistry) join(keys []string) *waiter {
	id := strings.Join(keys, "\x00")
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.m[id]
	if w == nil {
		w = &waiter{p: r.p, keys: keys, wake: make(chan struct{})}
		r.m[id] = w
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fetchers++
	if !w.running {
		w.running = true
		go w.run(r, id)
	}
	return w
}

func (r *waitRegistry) leave(w *waiter) {
	w.mu.Lock()
	w.fetchers--
	w.mu.Unlock()
}

// waiter blocks in BZPOPMIN on one set of wake keys for the local fetchers.
type waiter struct {
	p    *Provider
	keys []string

	mu       sync.Mutex
	fetchers int
	running  bool
	wake     chan struct{} // closed (and replaced) at every wake-up
	due      time.Time     // earliest due time reported since the last wake; zero: none
	idleAt   time.Time     // when a fetch last found nothing with no wake since; zero: unknown
}

// watch returns the channel the next wake-up closes, and whether the state is
// known to be unchanged since an empty fetch (the caller may skip its script).
func (w *waiter) watch() (<-chan struct{}, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	fresh := !w.idleAt.IsZero() && now.Sub(w.idleAt) < trustIdle && (w.due.IsZero() || now.Before(w.due))
	return w.wake, fresh
}

// dueAt is the earliest due time known since the last wake-up (zero: none).
func (w *waiter) dueAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.due
}

// idle records an empty fetch that started while wake was current.
func (w *waiter) idle(wake <-chan struct{}, due time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wake != w.wake {
		return // woken meanwhile: the result is already stale
	}
	now := time.Now()
	w.idleAt = now
	if due >= 0 {
		if t := now.Add(due); w.due.IsZero() || t.Before(w.due) {
			w.due = t
		}
	}
}

// signal wakes every local fetcher and forgets what the last empty fetch
// vouched for. The caller holds w.mu.
func (w *waiter) signal() {
	close(w.wake)
	w.wake = make(chan struct{})
	w.due = time.Time{}
	w.idleAt = time.Time{}
}

// run is the waiter's loop: it blocks while fetchers wait and stops when none
// is left or the provider closes.
func (w *waiter) run(r *waitRegistry, id string) {
	for {
		r.mu.Lock()
		w.mu.Lock()
		if w.fetchers == 0 {
			w.running = false
			w.idleAt = time.Time{}
			delete(r.m, id)
			w.mu.Unlock()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if !w.idleAt.IsZero() && time.Since(w.idleAt) >= trustIdle {
			w.signal() // let the fetchers refresh what their scripts registered
		}
		w.mu.Unlock()
		if !w.block() {
			return
		}
	}
}

// block waits once in BZPOPMIN; it returns false when the provider is closed.
func (w *waiter) block() bool {
	args := make([]any, 0, len(w.keys)+2)
	args = append(args, "BZPOPMIN")
	for _, k := range w.keys {
		args = append(args, k)
	}
	args = append(args, strconv.FormatFloat(maxBlock.Seconds(), 'f', 3, 64))
	res, err := w.p.blocking.Do(context.Background(), args...).Result()
	select {
	case <-w.p.closed:
		return false
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		if w.fetchers == 0 {
			w.rearm(res)
			return true
		}
		w.signal()
	case !errors.Is(err, redis.Nil):
		// a killed connection, failover or restart: the fetchers find out
		// with their next script; the pause keeps a dead server from being
		// hammered
		w.signal()
		w.mu.Unlock()
		time.Sleep(retryPause)
		w.mu.Lock()
	}
	return true
}

// rearm puts back a marker popped after the last local fetcher left, so a
// fetcher elsewhere still gets it.
func (w *waiter) rearm(res any) {
	v, ok := res.([]any)
	if !ok || len(v) < 1 {
		return
	}
	if key, ok := v[0].(string); ok {
		w.p.blocking.ZAdd(context.Background(), key, redis.Z{Score: 0, Member: wakeMember})
	}
}

// wakeMember is the single member of every wake key (see lua/lib_util.lua).
const wakeMember = "w"
