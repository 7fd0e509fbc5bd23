package durabletest

import (
	"context"
	dxredis "github.com/duroxide-go/duroxide-redis"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// WithTimeSkipping(false) turns time skipping off: the Env's waits (Wait,
// StartAndWait, WaitForEventSubscription, WaitForTimer) then wait in real
// time, and only Advance moves the clock. It is on by default on miniredis
// (real servers have no clock to move).
//
// With time skipping, while a test waits through the Env (any of its waits)
// and nothing can run (no orchestration message
// visible, no turn or activity in flight, no activity queued) but something
// is due later (a durable timer, a delayed message), the clock jumps to the
// earliest such time, as Temporal's test environment does: a workflow
// waiting a day on a timer completes at once. An activity's own run time is
// never skipped (it is in flight), and time never moves while the test
// itself runs between waits. A wait for a state (WaitForEventSubscription,
// WaitForTimer) stops skipping once that state is stored, so a test can
// wait for a subscription and raise the event before a deadline timer
// would fire. Time is skipped for every instance of the Env, not only the
// one waited for. While an activity session (durable.WithSession) is held,
// time does not skip: its owner renews the session's lease in real time,
// and a jump past the lease would move the session to another worker; it is
// released after Options.SessionIdleTimeout without activities.
func WithTimeSkipping(on bool) Option { return func(c *config) { c.noSkip = !on } }

// skipPoll is how often a waiting test looks for a chance to skip time: a
// few Redis reads, and the delay before a timer fires once everything else
// has settled.
const skipPoll = 5 * time.Millisecond

// skipWhile skips time until stop is closed (the wait it serves returned).
func (e *Env) skipWhile(stop <-chan struct{}) {
	tick := time.NewTicker(skipPoll)
	defer tick.Stop()
	var last idleState
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		st, ok := e.idle(context.Background())
		e.skipChecks.Add(1)
		// Two snapshots alike, with no message enqueued between them, before
		// moving: a snapshot is atomic, but a second one costs nothing and
		// keeps a jump away from anything just about to start.
		if ok && st == last {
			e.skipTo(st.due)
		}
		last = st
		if !ok {
			last = idleState{}
		}
	}
}

// skipTo moves the clock to due unless another waiter already did: one
// jump at a time, so concurrent waits never add their jumps up. No jump is
// made while any wait's hold reports the state it waits for: the wait is
// about to return, and a jump could undo what it saw (fire the timer it
// returns, or the deadline the test means to beat). The namespace is idle,
// so that state cannot change between the check and the jump.
func (e *Env) skipTo(due time.Time) {
	e.skipMu.Lock()
	defer e.skipMu.Unlock()
	for _, hold := range e.holds {
		if hold() {
			return
		}
	}
	if d := due.Sub(e.Now()); d > 0 {
		e.Advance(d)
	}
}

// idleState is a snapshot of an idle namespace: the enqueue sequence (it
// moves with every message) and when the earliest delayed message is due.
type idleState struct {
	seq string
	due time.Time
}

// idle reports whether nothing in the Env's namespace can run now while
// something is due later, and when. It reads every partition's queue
// indexes (keys.go documents them; get_queue_depths.lua counts the same
// way) and outbox in one MULTI, which miniredis runs atomically: a message
// moving from a queue to a lock, or from an outbox to its partition, cannot
// hide between two reads.
func (e *Env) idle(ctx context.Context) (idleState, bool) {
	if e.bufferedReleasable(ctx) {
		return idleState{}, false
	}
	parts := make([]*partIdle, e.Provider.Partitions())
	for i := range parts {
		k := e.Provider.PartitionKeys(i)
		queues, err := e.rdb.SMembers(ctx, k.WorkQueues()).Result()
		if err != nil {
			return idleState{}, false
		}
		parts[i] = &partIdle{k: k, queues: queues}
	}
	now := "(" + strconv.FormatInt(e.Now().UnixMilli(), 10)
	ns := e.Provider.Keys()
	var schedDue *redis.ZSliceCmd
	var schedPending *redis.IntCmd
	_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, part := range parts {
			part.read(ctx, p, now)
		}
		schedDue = p.ZRangeWithScores(ctx, ns.SchedulesDue(), 0, 0)
		schedPending = p.ZCard(ctx, ns.SchedulesPending())
		return nil
	})
	if err != nil && err != redis.Nil {
		return idleState{}, false
	}
	var st idleState
	due := int64(-1)
	// A firing claimed and not confirmed is a start under way; a due
	// schedule is a due time like a timer's.
	if schedPending.Val() > 0 {
		return idleState{}, false
	}
	if z := schedDue.Val(); len(z) > 0 {
		due = int64(z[0].Score)
	}
	for _, part := range parts {
		d, ok := part.idle()
		if !ok {
			return idleState{}, false
		}
		if d >= 0 && (due < 0 || d < due) {
			due = d
		}
		st.seq += part.seq.Val() + ":"
	}
	if due < 0 {
		return idleState{}, false
	}
	st.due = time.UnixMilli(due)
	return st, true
}

// partIdle is the idle check's reads of one partition.
type partIdle struct {
	k                  dxredis.Keys
	queues             []string
	seq                *redis.StringCmd
	stats              *redis.SliceCmd
	later, olck, wlck  *redis.IntCmd
	outbox             *redis.IntCmd
	nextOrch, nextWork *redis.ZSliceCmd
	nextToken          *redis.ZSliceCmd // a rate-limited group's next token
	sessions           *redis.StringSliceCmd
	queuesNow          *redis.StringSliceCmd
	ready              []*redis.IntCmd
}

// read queues the partition's reads on p.
func (x *partIdle) read(ctx context.Context, p redis.Pipeliner, now string) {
	k := x.k
	x.seq = p.Get(ctx, k.Seq())
	x.stats = p.HMGet(ctx, k.Stats(), "o_unl", "w_sready")
	x.later = p.ZCount(ctx, k.OrchFuture(), now, "+inf")
	x.nextOrch = p.ZRangeByScoreWithScores(ctx, k.OrchFuture(), &redis.ZRangeBy{Min: now, Max: "+inf", Count: 1})
	x.olck = p.ZCard(ctx, k.OrchLocked())
	x.wlck = p.ZCard(ctx, k.WorkLocked())
	x.outbox = p.ZCard(ctx, k.Outbox())
	x.nextWork = p.ZRangeWithScores(ctx, k.WorkDelayed(), 0, 0)
	x.sessions = p.ZRangeByScore(ctx, k.SessionsLive(), &redis.ZRangeBy{Min: now, Max: "+inf", Count: 1})
	x.queuesNow = p.SMembers(ctx, k.WorkQueues())
	x.nextToken = p.ZRangeWithScores(ctx, k.LimitWaiting(), 0, 0)
	for _, q := range x.queues {
		// the items of open limit groups are ready as well (lua/lib_lim.lua)
		x.ready = append(x.ready, p.ZCard(ctx, k.WorkQueue(q)), p.ZCard(ctx, k.LimitGroupsReady(q)))
	}
}

// idle says whether nothing in the partition can run now, and its earliest
// due time (-1: none).
func (x *partIdle) idle() (int64, bool) {
	unlocked, sessionReady := count(x.stats.Val(), 0), count(x.stats.Val(), 1)
	// A live session lease also holds time: its owner renews it in real
	// time, and a jump past it would move the session to another worker.
	// A message in an outbox is on its way to another partition.
	if unlocked-x.later.Val() > 0 || sessionReady > 0 || x.olck.Val() > 0 || x.wlck.Val() > 0 ||
		len(x.sessions.Val()) > 0 || x.outbox.Val() > 0 {
		return 0, false
	}
	if !sameSet(x.queues, x.queuesNow.Val()) {
		return 0, false
	}
	for _, r := range x.ready {
		if r.Val() > 0 {
			return 0, false
		}
	}
	due := int64(-1)
	for _, z := range [][]redis.Z{x.nextOrch.Val(), x.nextWork.Val(), x.nextToken.Val()} {
		if len(z) > 0 && (due < 0 || int64(z[0].Score) < due) {
			due = int64(z[0].Score)
		}
	}
	return due, true
}

// count reads the i-th value of an HMGET reply as a number (0 if absent).
func count(vals []any, i int) int64 {
	s, _ := vals[i].(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// waitSkipping runs wait with time skipping around it (when the Env skips
// time).
func (e *Env) waitSkipping(wait func()) { e.waitSkippingUnless(nil, wait) }

// waitSkippingUnless runs wait with time skipping around it (when the Env
// skips time); while hold (if not nil) reports true, no wait of the Env
// skips.
func (e *Env) waitSkippingUnless(hold func() bool, wait func()) {
	if e.noSkip || e.Redis == nil {
		wait()
		return
	}
	if hold != nil {
		e.skipMu.Lock()
		if e.holds == nil {
			e.holds = map[*func() bool]func() bool{}
		}
		e.holds[&hold] = hold
		e.skipMu.Unlock()
		defer func() {
			e.skipMu.Lock()
			delete(e.holds, &hold)
			e.skipMu.Unlock()
		}()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.skipWhile(stop)
	}()
	defer wg.Wait()
	defer close(stop)
	wait()
}

// bufferedReleasable reports whether a schedule holds a buffered firing
// whose awaited instance has ended: the scheduler is about to start it, so
// time must not move. It reads before the idle snapshot: an instance ending
// after this read needs a turn the snapshot sees.
func (e *Env) bufferedReleasable(ctx context.Context) bool {
	ns := e.Provider.Keys()
	ids, err := e.rdb.ZRange(ctx, ns.SchedulesBuffered(), 0, -1).Result()
	if err != nil {
		return true
	}
	for _, id := range ids {
		last, err := e.rdb.HGet(ctx, ns.Schedule(id), "last").Result()
		if err != nil {
			return true
		}
		st, err := e.Client.Status(ctx, last)
		if err != nil || st.IsTerminal() {
			return true
		}
	}
	return false
}
