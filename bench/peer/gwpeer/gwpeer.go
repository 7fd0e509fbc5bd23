// Package gwpeer runs go-workflows (github.com/cschleiden/go-workflows), the
// closest Go peer of duroxide-redis (durable workflows replayed from a
// history, on Redis), as the benchmark's orchestration peer: the same
// orchestrations the bench runs on the durable runtime, through go-workflows's
// client, worker and Redis backend, on the same Redis.
//
// Like asynqpeer it only offers primitives (start an orchestration, run the
// workers, report completions, clean up); the bench command measures it with
// the code that measures the durable runtime. Only the bench imports it.
package gwpeer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/cschleiden/go-workflows/backend"
	"github.com/cschleiden/go-workflows/backend/history"
	gwredis "github.com/cschleiden/go-workflows/backend/redis"
	"github.com/cschleiden/go-workflows/client"
	"github.com/cschleiden/go-workflows/core"
	"github.com/cschleiden/go-workflows/worker"
	"github.com/cschleiden/go-workflows/workflow"
	"github.com/redis/go-redis/v9"
)

// Module is go-workflows's module path, for Version.
const Module = "github.com/cschleiden/go-workflows"

// FanOutInput is the input of FanOut.
type FanOutInput struct {
	Activities int    // activities scheduled at once, then awaited
	Payload    string // the input of every activity
}

// TreeInput is the input of Tree.
type TreeInput struct {
	Depth   int    // levels of sub-orchestrations below this one
	Width   int    // children per inner node
	Payload string // the input of each leaf's activity
}

// SequenceInput is the input of Sequence.
type SequenceInput struct {
	Activities int    // activities awaited one after another
	Payload    string // the input of every activity
}

// Echo is the benchmark's activity: it returns its input, so the payload
// travels both ways through the backend.
func Echo(_ context.Context, in string) (string, error) { return in, nil }

// FanOut schedules in.Activities Echo activities together and completes
// when all have returned.
func FanOut(ctx workflow.Context, in FanOutInput) (string, error) {
	fs := make([]workflow.Future[string], in.Activities)
	for i := range fs {
		fs[i] = workflow.ExecuteActivity[string](ctx, workflow.DefaultActivityOptions, Echo, in.Payload)
	}
	for _, f := range fs {
		if _, err := f.Get(ctx); err != nil {
			return "", err
		}
	}
	return "done", nil
}

// Sequence runs in.Activities Echo activities one after another, each
// awaited before the next is scheduled, so the history grows by one
// activity per workflow task.
func Sequence(ctx workflow.Context, in SequenceInput) (string, error) {
	for range in.Activities {
		if _, err := workflow.ExecuteActivity[string](ctx, workflow.DefaultActivityOptions, Echo, in.Payload).Get(ctx); err != nil {
			return "", err
		}
	}
	return "done", nil
}

// Tree starts in.Width sub-orchestrations of itself one level shallower and
// waits for them; a leaf (Depth 0) runs one Echo activity.
func Tree(ctx workflow.Context, in TreeInput) (string, error) {
	if in.Depth == 0 {
		return workflow.ExecuteActivity[string](ctx, workflow.DefaultActivityOptions, Echo, in.Payload).Get(ctx)
	}
	child := TreeInput{Depth: in.Depth - 1, Width: in.Width, Payload: in.Payload}
	fs := make([]workflow.Future[string], in.Width)
	for i := range fs {
		fs[i] = workflow.CreateSubWorkflowInstance[string](ctx, workflow.DefaultSubWorkflowOptions, Tree, child)
	}
	for _, f := range fs {
		if _, err := f.Get(ctx); err != nil {
			return "", err
		}
	}
	return "done", nil
}

// Events are the completions the peer reports, each when go-workflows has
// committed it to Redis.
type Events struct {
	// Finished reports an orchestration's final task: its instance, whether
	// it is a root (started by Start*) and the error it ended with, if any.
	Finished func(instance string, root bool, failure error, at time.Time)
	// Activity reports a completed activity.
	Activity func(at time.Time)
}

// Peer is one go-workflows backend, worker and client on a key prefix.
type Peer struct {
	prefix  string
	backend backend.Backend
	client  *client.Client
	// instances maps the id of every instance started here to its
	// go-workflows instance, whose execution id a history read needs
	instances sync.Map
	stop      context.CancelFunc
	worker    *worker.Worker
	once      sync.Once
	err       error
}

// Start runs a go-workflows worker on rdb under prefix (its keys all start
// with it; see KeyPattern) with concurrency pollers and concurrency parallel
// tasks of each kind, reporting to ev. Stop ends it; the caller keeps rdb.
func Start(ctx context.Context, rdb redis.UniversalClient, prefix string, concurrency int, ev Events) (*Peer, error) {
	// warnings and errors only: go-workflows logs every task at debug and
	// info level, and an error may explain a bad figure
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := gwredis.NewRedisBackend(rdb, gwredis.WithKeyPrefix(prefix),
		gwredis.WithBackendOptions(backend.WithLogger(log.With("peer", "go-workflows"))))
	if err != nil {
		return nil, fmt.Errorf("go-workflows redis backend: %w", err)
	}
	ob := &observed{Backend: b, ev: ev}
	wo := worker.DefaultOptions
	wo.WorkflowPollers, wo.MaxParallelWorkflowTasks = concurrency, concurrency
	wo.ActivityPollers, wo.MaxParallelActivityTasks = concurrency, concurrency
	// what go-workflows's own benchmark sets for Redis: its pollers block in
	// Redis, so a polling interval would only add sleeps
	wo.WorkflowPollingInterval, wo.ActivityPollingInterval = 0, 0
	w := worker.New(ob, &wo)
	for _, wf := range []workflow.Workflow{FanOut, Tree, Sequence} {
		if err := w.RegisterWorkflow(wf); err != nil {
			return nil, err
		}
	}
	if err := w.RegisterActivity(Echo); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := w.Start(wctx); err != nil {
		cancel()
		return nil, fmt.Errorf("go-workflows worker: %w", err)
	}
	return &Peer{prefix: prefix, backend: b, client: client.New(ob), stop: cancel, worker: w}, nil
}

// StartFanOut creates a FanOut instance with the given id.
func (p *Peer) StartFanOut(ctx context.Context, id string, in FanOutInput) error {
	return p.create(ctx, id, FanOut, in)
}

// StartTree creates a Tree instance with the given id.
func (p *Peer) StartTree(ctx context.Context, id string, in TreeInput) error {
	return p.create(ctx, id, Tree, in)
}

// StartSequence creates a Sequence instance with the given id.
func (p *Peer) StartSequence(ctx context.Context, id string, in SequenceInput) error {
	return p.create(ctx, id, Sequence, in)
}

func (p *Peer) create(ctx context.Context, id string, wf workflow.Workflow, in any) error {
	inst, err := p.client.CreateWorkflowInstance(ctx, client.WorkflowInstanceOptions{InstanceID: id}, wf, in)
	if err == nil {
		p.instances.Store(id, inst)
	}
	return err
}

// HistoryLength is the number of events go-workflows stored for the
// instance id started by this peer (its workflow-task markers included).
func (p *Peer) HistoryLength(ctx context.Context, id string) (int, error) {
	v, ok := p.instances.Load(id)
	if !ok {
		return 0, fmt.Errorf("go-workflows history of %s: not started by this peer", id)
	}
	h, err := p.backend.GetWorkflowInstanceHistory(ctx, v.(*workflow.Instance), nil)
	if err != nil {
		return 0, fmt.Errorf("go-workflows history of %s: %w", id, err)
	}
	return len(h), nil
}

// Stop stops the pollers and waits for the tasks in hand to finish; later
// calls return the first one's result (go-workflows's own wait may run once).
func (p *Peer) Stop() error {
	p.once.Do(func() {
		p.stop()
		p.err = p.worker.WaitForCompletion()
	})
	return p.err
}

// KeyPattern matches every key the peer wrote.
func (p *Peer) KeyPattern() string { return p.prefix + "*" }

// Version is the go-workflows module version this binary was built with.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == Module {
				return d.Version
			}
		}
	}
	return "unknown"
}

// observed is the backend with the peer's completions reported: after the
// backend's own commit returned, so a reported completion is durable, the
// same point at which the bench counts the durable runtime's.
type observed struct {
	backend.Backend
	ev Events
}

// CompleteWorkflowTask reports the instance when the committed task
// finished it: the task that recorded its completion event. Later tasks of
// a finished instance (go-workflows runs one for each activity result
// still arriving, as after a failure at its history limit) also commit the
// finished state, and are not reported again.
func (o *observed) CompleteWorkflowTask(ctx context.Context, task *backend.WorkflowTask, state core.WorkflowInstanceState,
	executed, activities, timers []*history.Event, workflowEvents []*history.WorkflowEvent) error {
	err := o.Backend.CompleteWorkflowTask(ctx, task, state, executed, activities, timers, workflowEvents)
	if err == nil && state == core.WorkflowInstanceStateFinished && o.ev.Finished != nil {
		if done, failure := completion(executed); done {
			inst := task.WorkflowInstance
			o.ev.Finished(inst.InstanceID, inst.Parent == nil, failure, time.Now())
		}
	}
	return err
}

// CompleteActivityTask reports the committed activity result.
func (o *observed) CompleteActivityTask(ctx context.Context, task *backend.ActivityTask, result *history.Event) error {
	err := o.Backend.CompleteActivityTask(ctx, task, result)
	if err == nil && o.ev.Activity != nil {
		o.ev.Activity(time.Now())
	}
	return err
}

// completion finds the completion event among a task's executed events:
// done reports whether there is one, failure is the error it recorded.
func completion(executed []*history.Event) (done bool, failure error) {
	for _, e := range executed {
		if a, ok := e.Attributes.(*history.ExecutionCompletedAttributes); ok {
			if a.Error != nil {
				return true, errors.New(a.Error.Message)
			}
			return true, nil
		}
	}
	return false, nil
}
