// Package asynqpeer runs asynq (github.com/hibiken/asynq), the well-known Go
// queue on Redis + Lua, as the benchmark's peer: no-op tasks enqueued with
// its client and processed by its server, on the same Redis and with the
// same kind of go-redis client as the provider.
//
// It is the only package of the module that imports asynq, and only the
// bench command imports it, so the library never depends on the peer. It
// offers primitives (enqueue, serve, clean up); the measuring is done by the
// bench command with the same code that measures the provider.
package asynqpeer

import (
	"context"
	"fmt"
	"log"
	"os"
	"runtime/debug"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// TaskType is the type of every benchmark task.
const TaskType = "bench:noop"

// Peer enqueues to and serves one asynq queue.
type Peer struct {
	rdb    redis.UniversalClient
	client *asynq.Client
	queue  string
}

// New returns a peer on rdb using queue, a name unique to the run: asynq's
// keys of a queue all start with "asynq:{queue}:", which is what lets a run
// clean up after itself (see KeyPattern) without touching anyone else's
// asynq data in the same database.
func New(rdb redis.UniversalClient, queue string) *Peer {
	return &Peer{rdb: rdb, client: asynq.NewClientFromRedisClient(rdb), queue: queue}
}

// Enqueue adds one no-op task carrying payload. MaxRetry 0 and no retention:
// a processed task is deleted, as a completed activity is.
func (p *Peer) Enqueue(ctx context.Context, payload string) error {
	_, err := p.client.EnqueueContext(ctx, asynq.NewTask(TaskType, []byte(payload)),
		asynq.Queue(p.queue), asynq.MaxRetry(0))
	return err
}

// Serve starts an asynq server processing the queue with concurrency
// handlers; handle is called with each task's id and payload and the handler then
// returns nil (the task succeeds); id is asynq's task id. poll is the server's TaskCheckInterval,
// how long its single dequeue loop sleeps after finding the queue empty; 0
// keeps asynq's default (1s). stop shuts the server down gracefully.
func (p *Peer) Serve(concurrency int, poll time.Duration, handle func(id, payload string)) (stop func(), err error) {
	srv := asynq.NewServerFromRedisClient(p.rdb, asynq.Config{
		Concurrency:       concurrency,
		Queues:            map[string]int{p.queue: 1},
		TaskCheckInterval: poll,
		Logger:            quiet{},
		ShutdownTimeout:   10 * time.Second,
	})
	err = srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		handle(id, string(t.Payload()))
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("asynq server: %w", err)
	}
	return srv.Shutdown, nil
}

// KeyPattern matches every key of the peer's queue (tasks, lists, stats).
func (p *Peer) KeyPattern() string { return "asynq:{" + p.queue + "}:*" }

// Forget removes the queue from asynq's registry of queues; with the keys of
// KeyPattern deleted, nothing of the run is left (server and worker records
// expire on their own and are removed by Shutdown).
func (p *Peer) Forget(ctx context.Context) error {
	return p.rdb.SRem(ctx, "asynq:queues", p.queue).Err()
}

// Version is the asynq module version this binary was built with.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/hibiken/asynq" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// quiet drops asynq's routine logging (it reports every start and stop at
// info level), keeping errors, which may explain a bad figure.
type quiet struct{}

var errLog = log.New(os.Stderr, "asynq: ", log.LstdFlags)

func (quiet) Debug(...any)      {}
func (quiet) Info(...any)       {}
func (quiet) Warn(args ...any)  { errLog.Print(append([]any{"warning: "}, args...)...) }
func (quiet) Error(args ...any) { errLog.Print(append([]any{"error: "}, args...)...) }
func (quiet) Fatal(args ...any) { errLog.Fatal(args...) }
