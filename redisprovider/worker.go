package redisprovider

import (
	"context"
	"sort"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// EnqueueForWorker adds an ActivityExecute to the worker queue of its tag
// (and session). Any other item is a permanent error.
func (p *partition) EnqueueForWorker(ctx context.Context, item duroxide.WorkItem) error {
	return p.enqueueWorker(ctx, "enqueue_for_worker", []duroxide.WorkItem{item})
}

// FetchWorkItem locks the oldest eligible activity among the tag queues the
// filter names. Without a session config, activities of a session are never
// returned; with one, also those of sessions owned by session.OwnerID and of
// unowned or expired sessions, and taking one claims (or extends) its session
// until now + session.LockTimeout. (nil, nil) means no work within
// pollTimeout.
func (p *partition) FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	return p.fetchWork(ctx, lockTimeout, pollTimeout, session, tags)
}

// fetchWork is FetchWorkItem.
func (p *partition) fetchWork(ctx context.Context, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	const op = "fetch_work_item"
	c, _, err := workClass(op, p.lockFor(lockTimeout), lockTimeout, pollTimeout, session, tags)
	if err != nil {
		return nil, err
	}
	return fetchOne[duroxide.LockedWorkItem](ctx, p, op, c, pollTimeout)
}

// workClass validates a worker fetch and encodes it for
// lua/fetch_work_item.lua (the token is added per call): its class and
// arguments. lock is the lock duration the script takes. NoTags: no queues,
// no wake keys, the class takes nothing.
func workClass(op string, lock, lockTimeout, pollTimeout time.Duration, session *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (fetchClass, args, error) {
	if err := checkDurations(op, lockTimeout, pollTimeout); err != nil {
		return fetchClass{}, nil, err
	}
	queues, err := tagQueues(op, tags)
	if err != nil {
		return fetchClass{}, nil, err
	}
	if session != nil {
		if session.OwnerID == "" {
			return fetchClass{}, nil, invalid(op, "session config with an empty owner id")
		}
		if err := checkDurations(op, session.LockTimeout); err != nil {
			return fetchClass{}, nil, err
		}
	}
	var a args
	a.ms(lock)
	if session != nil {
		a.flag(true).str(session.OwnerID).ms(session.LockTimeout)
	} else {
		a.flag(false).str("").ms(0)
	}
	a.int(len(queues))
	for _, q := range queues {
		a.str(q)
	}
	c := fetchClass{id: classID(op, a), empty: len(queues) == 0}
	c.build = func(p *partition) fetchSpec {
		return fetchSpec{keys: p.workWakeKeys(queues, session), queue: queueWork,
			once: func(ctx context.Context) (any, time.Duration, error) {
				item, due, err := p.fetchWorkOnce(ctx, op, a)
				return untyped(item), due, err
			},
			giveBack: func(item any) {
				p.giveBack(op, scriptAbandonWorkItem, item.(*duroxide.LockedWorkItem).LockToken)
			},
			op: op, args: a, abandon: scriptAbandonWorkItem,
			decode: func(r *reply) (any, time.Duration, error) {
				item, due, err := workReply(op, r)
				return untyped(item), due, err
			}}
	}
	return c, a, nil
}

// tagQueues lists the tag queues a filter reads ('d' untagged, 't:<tag>',
// '*' any), sorted so equal filters share one fetch class.
func tagQueues(op string, f duroxide.TagFilter) ([]string, error) {
	if err := f.Validate(); err != nil {
		return nil, invalid(op, "tag filter: %v", err)
	}
	var qs []string
	switch f.Kind {
	case duroxide.TagAny:
		return []string{"*"}, nil
	case duroxide.TagNone:
		return nil, nil
	case duroxide.TagDefaultOnly, duroxide.TagDefaultAnd:
		qs = append(qs, "d")
	}
	if f.Kind == duroxide.TagOnly || f.Kind == duroxide.TagDefaultAnd {
		seen := map[string]bool{}
		for _, t := range f.Tags {
			if !seen[t] {
				seen[t] = true
				qs = append(qs, queueOf(&t))
			}
		}
	}
	sort.Strings(qs)
	return qs, nil
}

// workWakeKeys lists the wake keys of the classes a fetch may take from,
// matching W.classes in lua/lib_work.lua.
func (p *partition) workWakeKeys(queues []string, session *duroxide.SessionFetchConfig) []string {
	keys := make([]string, 0, 3*len(queues))
	for _, q := range queues {
		keys = append(keys, p.keys.WorkWake(q))
		if session != nil {
			keys = append(keys, p.keys.OwnedWake(q, session.OwnerID), p.keys.ClaimableWake(q))
		}
	}
	return keys
}

// Reply of lua/fetch_work_item.lua when it took work (after fetchTook).
const (
	workItem = fetchTook + 1 + iota
	workToken
	workAttempts
	workNow
	workRerun // nil: more work is eligible
)

// fetchWorkOnce runs the fetch script once (see fetchScript).
func (p *partition) fetchWorkOnce(ctx context.Context, op string, a args) (*duroxide.LockedWorkItem, time.Duration, error) {
	r, _, err := p.fetchScript(ctx, op, scriptFetchWorkItem, scriptAbandonWorkItem, a)
	if r == nil || err != nil {
		return nil, 0, err
	}
	return workReply(op, r)
}

// workReply reads a fetch reply of lua/fetch_work_item.lua: the item taken,
// if any, and when to run the script again.
func workReply(op string, r *reply) (*duroxide.LockedWorkItem, time.Duration, error) {
	if r.int(fetchTook) == 0 {
		return nil, dueIn(r), r.err
	}
	raw, _ := r.str(workItem)
	// '<seq>:<nonce>': the item, and the nonce fetchScript sent
	token, _ := r.str(workToken)
	attempts := r.int(workAttempts)
	if r.err != nil {
		return nil, 0, r.err
	}
	item, err := duroxide.UnmarshalWorkItem([]byte(raw))
	if err != nil {
		// the lock is kept until it expires, so a corrupt item is not
		// fetched in a tight loop
		return nil, 0, undecodable(op, "stored work item cannot be decoded (lock_token %s left to expire): %v", token, err)
	}
	return &duroxide.LockedWorkItem{Item: item, LockToken: token, AttemptCount: uint32(attempts)}, rerunIn(r, workNow, workRerun), nil
}

// AckWorkItem deletes the locked item and enqueues completion (nil: none)
// for the orchestrator, atomically. A cancelled item (deleted by its
// orchestration), an expired or an unknown lock is a permanent error and
// nothing changes.
func (p *partition) AckWorkItem(ctx context.Context, lockToken string, completion duroxide.WorkItem) error {
	const op = "ack_work_item"
	a, err := workAckArgs(op, lockToken, completion)
	if err != nil {
		return err
	}
	_, err = p.run(ctx, op, scriptAckWorkItem, a)
	return err
}

// workAckArgs validates a worker ack and encodes it for
// lua/ack_work_item.lua.
func workAckArgs(op, lockToken string, completion duroxide.WorkItem) (args, error) {
	if err := checkToken(op, lockToken); err != nil {
		return nil, err
	}
	var a args
	a.str(lockToken)
	if isNilItem(completion) {
		a.flag(false).str("").str("")
		return a, nil
	}
	inst, body, err := orchestratorItem(op, completion)
	if err != nil {
		return nil, err
	}
	a.flag(true).str(inst).str(string(body))
	return a, nil
}

// AbandonWorkItem releases a worker lock without completing: the item is
// visible again after delay; ignoreAttempt undoes the attempt its fetch
// counted. An unknown token is a permanent error.
func (p *partition) AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error {
	return p.abandon(ctx, "abandon_work_item", scriptAbandonWorkItem, lockToken, delay, ignoreAttempt)
}

// RenewWorkItemLock extends a valid, unexpired worker lock to now +
// extendFor. It fails permanently once the item was cancelled or the lock
// lost: that is how a running activity learns it must stop.
func (p *partition) RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error {
	return p.renew(ctx, "renew_work_item_lock", scriptRenewWorkItemLock, lockToken, extendFor)
}
