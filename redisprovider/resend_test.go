package redisprovider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// lostReplyBundle is one write path's setup: a provider on a Cluster client
// whose only node is a fakeNode in front of miniredis, and a provider
// straight on miniredis to arrange state and look at it.
type lostReplyBundle struct {
	ctx    context.Context
	node   *fakeNode
	p      *partition // through the fake node, on a ClusterClient
	direct *partition
}

func newLostReplyBundle(t *testing.T, cluster *redis.ClusterOptions) *lostReplyBundle {
	t.Helper()
	m := miniredis.RunT(t)
	node := startFakeNode(t, m.Addr())
	cluster.Addrs = []string{node.Addr()}
	client := redis.NewClusterClient(cluster)
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	p, err := openPartition(ctx, Options{Client: client, Namespace: "resend"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	direct, err := openPartition(ctx, Options{URL: "redis://" + m.Addr() + "/0", Namespace: "resend"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	return &lostReplyBundle{ctx: ctx, node: node, p: p, direct: direct}
}

// script matches a call of script s (the fake node's miniredis has no
// functions, so every call is an EVALSHA or, after a lost script cache, an
// EVAL).
func (b *lostReplyBundle) script(s luaScript) func([]string) bool {
	sha := b.p.scripts[s].Hash()
	return func(cmd []string) bool {
		return len(cmd) > 1 && strings.EqualFold(cmd[0], "evalsha") && cmd[1] == sha
	}
}

// lockStart enqueues a start for inst and locks it through the fake node.
func (b *lostReplyBundle) lockStart(t *testing.T, inst string) *duroxide.OrchestrationItem {
	t.Helper()
	start := duroxide.StartOrchestration{Instance: inst, Orchestration: "O", Input: `""`, ExecutionID: 1}
	if err := b.direct.EnqueueForOrchestrator(b.ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	item, err := b.p.FetchOrchestrationItem(b.ctx, time.Minute, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("fetch %s: %+v, %v", inst, item, err)
	}
	return item
}

// lockActivity enqueues an activity of inst and locks it through the fake
// node.
func (b *lostReplyBundle) lockActivity(t *testing.T, inst string) *duroxide.LockedWorkItem {
	t.Helper()
	if err := b.direct.EnqueueForWorker(b.ctx, duroxide.ActivityExecute{Instance: inst, ExecutionID: 1, ID: 2, Name: "A", Input: `""`}); err != nil {
		t.Fatal(err)
	}
	item, err := b.p.FetchWorkItem(b.ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
	if err != nil || item == nil {
		t.Fatalf("fetch activity of %s: %+v, %v", inst, item, err)
	}
	return item
}

// queued is how many orchestrator messages wait (unlocked), read straight
// from miniredis; inst names the instance they are for, in failures.
func (b *lostReplyBundle) queued(t *testing.T, inst string) int {
	t.Helper()
	d, err := b.direct.GetQueueDepths(b.ctx)
	if err != nil {
		t.Fatalf("queue depths (%s): %v", inst, err)
	}
	return d.OrchestratorQueue
}

// started is a commit that creates inst's first execution.
func started(inst string) duroxide.OrchestrationCommit {
	ev := duroxide.NewEvent(1, inst, 1, nil, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: `""`})
	return duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: []duroxide.Event{ev},
		Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O", OrchestrationVersion: "1.0.0"}}
}

// A ClusterClient re-sends a command whose reply was lost, whatever its
// MaxRetries says (up to MaxRedirects times): an enqueue ran twice behind
// one nil, and a re-sent ack reported a lock error for an ack it had
// applied. Every write path must now reach the server once: the call
// returns a retryable error (its reply was lost) and its effect is there
// exactly once. Both the go-redis defaults and the README's recipe
// (MaxRetries -1) are covered.
func TestClusterClientNeverResendsAWrite(t *testing.T) {
	t.Parallel()
	clients := map[string]func() *redis.ClusterOptions{
		"defaults": func() *redis.ClusterOptions { return &redis.ClusterOptions{} },
		"recipe": func() *redis.ClusterOptions {
			return &redis.ClusterOptions{MaxRetries: -1, ContextTimeoutEnabled: true}
		},
	}
	type path struct {
		name   string
		script luaScript
		// call runs the write whose reply is lost; check then looks at
		// what it left
		call func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T))
	}
	enqueue := func(item duroxide.WorkItem, inst string) func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
		return func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			return func() error { return b.p.EnqueueForOrchestrator(b.ctx, item, 0) },
				func(t *testing.T) {
					if n := b.queued(t, inst); n != 1 {
						t.Errorf("%s has %d messages queued, want 1", inst, n)
					}
				}
		}
	}
	paths := []path{
		{"start", scriptEnqueueForOrchestrator, enqueue(duroxide.StartOrchestration{Instance: "s", Orchestration: "O", Input: `""`, ExecutionID: 1}, "s")},
		{"raise", scriptEnqueueForOrchestrator, enqueue(duroxide.ExternalRaised{Instance: "r", Name: "go", Data: `"x"`}, "r")},
		{"enqueue", scriptEnqueueForOrchestrator, enqueue(duroxide.QueueMessage{Instance: "q", Name: "go", Data: `"x"`}, "q")},
		{"cancel", scriptEnqueueForOrchestrator, enqueue(duroxide.CancelInstance{Instance: "c", Reason: "r"}, "c")},
		{"enqueue_for_worker", scriptEnqueueForWorker, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			return func() error {
					return b.p.EnqueueForWorker(b.ctx, duroxide.ActivityExecute{Instance: "w", ExecutionID: 1, ID: 2, Name: "A", Input: `""`})
				}, func(t *testing.T) {
					for i := range 2 {
						item, err := b.direct.FetchWorkItem(b.ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
						if err != nil || (i == 0) != (item != nil) {
							t.Errorf("fetch %d of the enqueued activity: %+v, %v (want exactly one)", i+1, item, err)
						}
					}
				}
		}},
		{"ack_orchestration_item", scriptAckOrchestrationItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockStart(t, "ao")
			return func() error { return b.p.AckOrchestrationItem(b.ctx, item.LockToken, started("ao")) },
				func(t *testing.T) {
					h, err := b.direct.Read(b.ctx, "ao")
					if err != nil || len(h) != 1 {
						t.Errorf("history after the ack: %d events, %v; want 1", len(h), err)
					}
				}
		}},
		{"ack_fetch_orchestration_item", scriptAckFetchOrchestrationItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockStart(t, "af")
			return func() error {
					_, err := b.p.AckOrchestrationItemAndFetch(b.ctx, item.LockToken, started("af"), time.Minute, 0, nil)
					return err
				}, func(t *testing.T) {
					h, err := b.direct.Read(b.ctx, "af")
					if err != nil || len(h) != 1 {
						t.Errorf("history after the ack: %d events, %v; want 1", len(h), err)
					}
				}
		}},
		{"abandon_orchestration_item", scriptAbandonOrchestrationItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockStart(t, "bo")
			return func() error { return b.p.AbandonOrchestrationItem(b.ctx, item.LockToken, 0, false) },
				func(t *testing.T) {
					if n := b.queued(t, "bo"); n != 1 {
						t.Errorf("the abandoned start: %d messages, want 1", n)
					}
				}
		}},
		{"renew_orchestration_item_lock", scriptRenewOrchestrationItemLock, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockStart(t, "no")
			return func() error { return b.p.RenewOrchestrationItemLock(b.ctx, item.LockToken, time.Minute) },
				func(t *testing.T) {
					if err := b.direct.RenewOrchestrationItemLock(b.ctx, item.LockToken, time.Minute); err != nil {
						t.Errorf("the lock after the renew: %v", err)
					}
				}
		}},
		{"ack_work_item", scriptAckWorkItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockActivity(t, "aw")
			done := duroxide.ActivityCompleted{Instance: "aw", ExecutionID: 1, ID: 2, Result: `"ok"`}
			return func() error { return b.p.AckWorkItem(b.ctx, item.LockToken, done) },
				func(t *testing.T) {
					if n := b.queued(t, "aw"); n != 1 {
						t.Errorf("the completion: %d messages, want 1", n)
					}
				}
		}},
		{"ack_fetch_work_item", scriptAckFetchWorkItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockActivity(t, "fw")
			done := duroxide.ActivityCompleted{Instance: "fw", ExecutionID: 1, ID: 2, Result: `"ok"`}
			return func() error {
					_, err := b.p.AckWorkItemAndFetch(b.ctx, item.LockToken, done, time.Minute, 0, nil, duroxide.DefaultOnly())
					return err
				}, func(t *testing.T) {
					if n := b.queued(t, "fw"); n != 1 {
						t.Errorf("the completion: %d messages, want 1", n)
					}
				}
		}},
		{"abandon_work_item", scriptAbandonWorkItem, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockActivity(t, "bw")
			return func() error { return b.p.AbandonWorkItem(b.ctx, item.LockToken, 0, false) },
				func(t *testing.T) {
					again, err := b.direct.FetchWorkItem(b.ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
					if err != nil || again == nil || again.AttemptCount != 2 {
						t.Errorf("refetch after the abandon: %+v, %v; want attempt 2", again, err)
					}
				}
		}},
		{"renew_work_item_lock", scriptRenewWorkItemLock, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			item := b.lockActivity(t, "nw")
			return func() error { return b.p.RenewWorkItemLock(b.ctx, item.LockToken, time.Minute) },
				func(t *testing.T) {
					if err := b.direct.RenewWorkItemLock(b.ctx, item.LockToken, time.Minute); err != nil {
						t.Errorf("the lock after the renew: %v", err)
					}
				}
		}},
		{"renew_session_lock", scriptRenewSessionLock, func(t *testing.T, b *lostReplyBundle) (func() error, func(t *testing.T)) {
			return func() error {
				_, err := b.p.RenewSessionLock(b.ctx, []string{"owner"}, time.Minute, time.Minute)
				return err
			}, func(t *testing.T) {}
		}},
	}
	for cname, opts := range clients {
		for _, pt := range paths {
			t.Run(cname+"/"+pt.name, func(t *testing.T) {
				t.Parallel()
				b := newLostReplyBundle(t, opts())
				call, check := pt.call(t, b)
				b.node.LoseNextReply(b.script(pt.script))
				err := call()
				if sent := b.node.Seen(); sent != 1 {
					t.Errorf("%s reached the server %d times, want once (go-redis re-sent it after its reply was lost); the call returned %v", pt.name, sent, err)
				}
				if err == nil {
					t.Errorf("%s returned nil although its reply was lost", pt.name)
				} else if !duroxide.IsRetryable(err) || errors.Is(err, duroxide.ErrLockLost) {
					t.Errorf("%s returned %v: want a retryable error that is not a lock error (it was applied)", pt.name, err)
				}
				check(t)
			})
		}
	}
}

// The relay's delivery into another partition is a write like the others:
// its reply lost, it reaches the server once and reports a retryable
// error; the next drain delivers the batch again, which the target's relay
// mark applies once.
func TestClusterClientNeverResendsARelay(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	node := startFakeNode(t, m.Addr())
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{node.Addr()}})
	t.Cleanup(func() { client.Close() })
	b := openRelayBundle(t, client, "resend", 2)
	target := b.instanceIn(1, "target")
	b.sendTurn(t, 0, []string{target})
	sha := b.pp.parts[1].scripts[scriptRelayMessages].Hash()
	node.LoseNextReply(func(cmd []string) bool {
		return len(cmd) > 1 && strings.EqualFold(cmd[0], "evalsha") && cmd[1] == sha
	})
	err := b.pp.relay.drain(b.ctx, 0)
	if sent := node.Seen(); sent != 1 {
		t.Errorf("the relay's delivery reached the server %d times, want once; drain returned %v", sent, err)
	}
	if err == nil || !duroxide.IsRetryable(err) {
		t.Errorf("drain with its delivery's reply lost = %v, want a retryable error", err)
	}
	if err := b.pp.relay.drain(b.ctx, 0); err != nil {
		t.Fatalf("the next drain: %v", err)
	}
	if n := b.queued(t, 1); n != 1 {
		t.Errorf("partition 1 has %d messages, want the one relayed once", n)
	}
	if n := b.outbox(t, 0); n != 0 {
		t.Errorf("partition 0's outbox holds %d entries after the drains, want 0", n)
	}
}
