package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Faults are the probabilities with which a dispatcher misbehaves with an
// item it fetched. They are exclusive and checked in this order.
type Faults struct {
	// Vanish: the dispatcher dies holding the lock (a crash mid-turn or
	// mid-activity); a replacement starts a moment later and the lock must
	// expire before anyone gets the item again.
	Vanish float64
	// Abandon: the dispatcher gives the item back with a short random delay
	// and a random ignoreAttempt.
	Abandon float64
	// LateAck: the dispatcher stalls until its lock has surely expired and
	// then acks; the ack must be refused with a lock_token error.
	LateAck float64
}

// fault is what a dispatcher does with one item.
type fault int

const (
	behave fault = iota
	vanish
	abandon
	lateAck
)

func (f Faults) pick(rng *rand.Rand) fault {
	x := rng.Float64()
	switch {
	case x < f.Vanish:
		return vanish
	case x < f.Vanish+f.Abandon:
		return abandon
	case x < f.Vanish+f.Abandon+f.LateAck:
		return lateAck
	}
	return behave
}

// Config sizes a Runtime.
type Config struct {
	FanOut        int           // activities per orchestration
	Orchestrators int           // orchestrator dispatchers
	Workers       int           // worker dispatchers
	LockTimeout   time.Duration // lock of every fetch
	PollTimeout   time.Duration // long poll of every fetch
	CallTimeout   time.Duration // context deadline of every call
	Orch, Work    Faults        // faults of orchestrator and worker dispatchers
	Seed          int64         // seeds the fault choices
}

// Runtime is a test-only duroxide runtime: orchestrator and worker
// dispatchers that drive a provider directly, as duroxide's do, running the
// fan-out / fan-in orchestration of this package.
type Runtime struct {
	p     duroxide.Provider
	cfg   Config
	check *Checker

	cancel context.CancelFunc
	wg     sync.WaitGroup

	vanished, abandoned, late atomic.Int64
}

// Start launches the dispatchers of a runtime on p; they run until Kill.
func Start(p duroxide.Provider, cfg Config, check *Checker) *Runtime {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{p: p, cfg: cfg, check: check, cancel: cancel}
	r.supervise(ctx, 1, cfg.Orchestrators, r.orchestrator)
	r.supervise(ctx, 1<<20, cfg.Workers, r.worker)
	return r
}

// Kill stops every dispatcher at once, as a process crash would: items held
// are neither acked nor abandoned, and calls in flight are cancelled.
func (r *Runtime) Kill() {
	r.cancel()
	r.wg.Wait()
}

// Summary counts the faults the dispatchers injected.
func (r *Runtime) Summary() string {
	return fmt.Sprintf("faults injected: %d vanished holding a lock, %d abandoned, %d late acks",
		r.vanished.Load(), r.abandoned.Load(), r.late.Load())
}

// supervise runs n dispatchers of one kind. A dispatcher that vanished is
// replaced by a new incarnation (new fault stream) until ctx ends.
func (r *Runtime) supervise(ctx context.Context, base int64, n int, loop func(context.Context, *rand.Rand)) {
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go func(i int64) {
			defer r.wg.Done()
			for inc := int64(0); ctx.Err() == nil; inc++ {
				loop(ctx, rand.New(rand.NewSource(r.cfg.Seed+(base+i)*1000+inc)))
				sleep(ctx, 20*time.Millisecond)
			}
		}(base + int64(i))
	}
}

// call runs one provider call under the call deadline and records it.
func (r *Runtime) call(ctx context.Context, op string, fn func(context.Context) error) Class {
	cctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	return r.check.Call(op, start, r.cfg.CallTimeout, fn(cctx))
}

// backoff pauses a dispatcher after a failed call.
func backoff(ctx context.Context, rng *rand.Rand) {
	sleep(ctx, time.Duration(20+rng.Intn(60))*time.Millisecond)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// dispatchLoop is the loop of every dispatcher incarnation: fetch (op) under
// the call deadline, back off after a failed fetch, and hand each item to
// handle with the time its fetch began. It returns when ctx ends or when
// handle reports that the dispatcher vanished.
func dispatchLoop[T any](ctx context.Context, r *Runtime, rng *rand.Rand, op string,
	fetch func(context.Context) (*T, error), handle func(item *T, fetchStart time.Time) bool) {
	for ctx.Err() == nil {
		var item *T
		start := time.Now()
		class := r.call(ctx, op, func(ctx context.Context) (err error) {
			item, err = fetch(ctx)
			return err
		})
		if class != OK {
			backoff(ctx, rng)
			continue
		}
		if item == nil {
			continue
		}
		if !handle(item, start) {
			return
		}
	}
}

// orchestrator is one incarnation of an orchestrator dispatcher; it returns
// when ctx ends or when it vanishes.
func (r *Runtime) orchestrator(ctx context.Context, rng *rand.Rand) {
	dispatchLoop(ctx, r, rng, "fetch_orchestration_item", func(ctx context.Context) (*duroxide.OrchestrationItem, error) {
		return r.p.FetchOrchestrationItem(ctx, r.cfg.LockTimeout, r.cfg.PollTimeout, nil)
	}, func(item *duroxide.OrchestrationItem, fetchStart time.Time) bool {
		return r.runTurn(ctx, rng, item, fetchStart)
	})
}

// runTurn handles one fetched orchestration item; false means the dispatcher
// vanished.
func (r *Runtime) runTurn(ctx context.Context, rng *rand.Rand, item *duroxide.OrchestrationItem, fetchStart time.Time) bool {
	inst, token := item.Instance, item.LockToken
	r.check.Fetched(inst, token, fetchStart, time.Now())
	// the turn is computed before any late-ack pause, as a real dispatcher
	// would: its events then carry this holder's time, so they can never be
	// byte-identical to those of the holder that reclaims the lock meanwhile
	commit, completes, problem := turn(item, r.cfg.FanOut)
	f := r.cfg.Orch.pick(rng)
	if acks, alive := r.misbehave(ctx, rng, f, inst, token, "abandon_orchestration_item", r.p.AbandonOrchestrationItem); !acks {
		return alive
	}
	if problem != "" {
		r.check.Violationf("instance %s: %s", inst, problem)
	}
	uncertain := func() {
		if completes {
			r.check.Uncertain(inst)
		}
	}
	r.ack(ctx, rng, inst, token, "ack_orchestration_item", func(ctx context.Context) error {
		return r.p.AckOrchestrationItem(ctx, token, commit)
	}, outcome{
		done:    func() { r.check.Acked(inst, commit, completes) },
		unknown: uncertain,
		refused: func() { r.check.Refused(inst, commit.HistoryDelta); uncertain() },
	})
	return true
}

// abandonFunc is the abandon method of one queue.
type abandonFunc func(ctx context.Context, token string, delay time.Duration, ignoreAttempt bool) error

// misbehave applies fault f to the lock token holds on key (key names it for
// the checker). acks reports whether the holder goes on to ack (at once, or
// after a late-ack stall); alive is false when the dispatcher vanished.
func (r *Runtime) misbehave(ctx context.Context, rng *rand.Rand, f fault, key, token, abandonOp string, abandonItem abandonFunc) (acks, alive bool) {
	switch f {
	case vanish:
		r.vanished.Add(1)
		return false, false
	case abandon:
		r.giveBack(ctx, rng, key, token, abandonOp, abandonItem)
		return false, true
	case lateAck:
		r.late.Add(1)
		sleep(ctx, r.cfg.LockTimeout+2*clockSlack)
	}
	return true, true
}

// giveBack abandons the item that token locks (key for the checker) with a
// random delay of up to 50 ms and a random ignoreAttempt.
func (r *Runtime) giveBack(ctx context.Context, rng *rand.Rand, key, token, op string, abandon abandonFunc) {
	r.abandoned.Add(1)
	r.check.Releasing(key, token)
	delay, ignore := time.Duration(rng.Intn(50))*time.Millisecond, rng.Intn(2) == 0
	r.call(ctx, op, func(ctx context.Context) error { return abandon(ctx, token, delay, ignore) })
}

// outcome receives the result of an ack.
type outcome struct {
	done    func() // an attempt returned nil
	unknown func() // an attempt failed retryably and none returned nil: it may have been applied
	refused func() // the first attempt failed permanently: nothing may have been written
}

// ack sends an ack for the lock token of key, repeating it while it fails
// with a retryable error and the lock may still be valid, and reports how it
// ended to out. A nil ack sent after the lock had surely expired is a
// violation.
func (r *Runtime) ack(ctx context.Context, rng *rand.Rand, key, token, op string, send func(context.Context) error, out outcome) {
	expiry := r.check.Releasing(key, token)
	failed := false
	for {
		sent := time.Now()
		switch r.call(ctx, op, send) {
		case OK:
			if !expiry.IsZero() && sent.After(expiry) {
				r.check.Violationf("%s of %s accepted at %s, after its lock expired at %s", op, key, stamp(sent), stamp(expiry))
			}
			out.done()
			return
		case Retryable, Canceled:
			failed = true
			if ctx.Err() != nil || time.Now().After(expiry) {
				out.unknown()
				return
			}
			backoff(ctx, rng)
		default:
			if failed {
				out.unknown()
			} else {
				out.refused()
			}
			return
		}
	}
}

// worker is one incarnation of a worker dispatcher; it returns when ctx ends
// or when it vanishes.
func (r *Runtime) worker(ctx context.Context, rng *rand.Rand) {
	dispatchLoop(ctx, r, rng, "fetch_work_item", func(ctx context.Context) (*duroxide.LockedWorkItem, error) {
		return r.p.FetchWorkItem(ctx, r.cfg.LockTimeout, r.cfg.PollTimeout, nil, duroxide.DefaultOnly())
	}, func(item *duroxide.LockedWorkItem, fetchStart time.Time) bool {
		return r.runActivity(ctx, rng, item, fetchStart)
	})
}

// runActivity "runs" one fetched activity and acks its result; false means
// the dispatcher vanished.
func (r *Runtime) runActivity(ctx context.Context, rng *rand.Rand, item *duroxide.LockedWorkItem, fetchStart time.Time) bool {
	act, ok := item.Item.(duroxide.ActivityExecute)
	if !ok {
		r.check.Violationf("worker queue returned %T", item.Item)
		return true
	}
	akey := activityKey(act.Instance, act.ExecutionID, act.ID)
	key, token := "activity "+akey, item.LockToken
	r.check.Fetched(key, token, fetchStart, time.Now())
	f := r.cfg.Work.pick(rng)
	if acks, alive := r.misbehave(ctx, rng, f, key, token, "abandon_work_item", r.p.AbandonWorkItem); !acks {
		return alive
	}
	if f == behave {
		sleep(ctx, time.Duration(rng.Intn(3))*time.Millisecond) // the activity's work
	}
	result := activityResult(act, token)
	done := duroxide.ActivityCompleted{Instance: act.Instance, ExecutionID: act.ExecutionID, ID: act.ID, Result: result}
	r.ack(ctx, rng, key, token, "ack_work_item", func(ctx context.Context) error {
		return r.p.AckWorkItem(ctx, token, done)
	}, outcome{
		done:    func() { r.check.WorkAcked(akey, result) },
		unknown: func() {},
		refused: func() { r.check.WorkRefused(result) },
	})
	return true
}

// StartInstances enqueues a StartOrchestration for each id, repeating each
// enqueue until it returns nil (a retried enqueue may deliver a second start;
// the runtime ignores starts of a started instance, as duroxide does).
func (r *Runtime) StartInstances(ctx context.Context, ids []string) error {
	rng := rand.New(rand.NewSource(r.cfg.Seed))
	for _, id := range ids {
		start := StartMessage(id)
		for r.call(ctx, "enqueue_for_orchestrator", func(ctx context.Context) error {
			return r.p.EnqueueForOrchestrator(ctx, start, 0)
		}) != OK {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			backoff(ctx, rng)
		}
	}
	return nil
}
