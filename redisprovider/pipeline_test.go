package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// batchHook records how many script calls each go-redis send carried (a
// pipeline, or one call alone: go-redis's autopipeliner sends a batch of one
// without a pipeline) and holds the first send after arm until release is
// closed, so that calls made meanwhile queue up behind it.
type batchHook struct {
	armed   atomic.Bool
	held    chan struct{} // closed when the first send is being held
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	sizes   []int
}

func newBatchHook() *batchHook {
	return &batchHook{held: make(chan struct{}), release: make(chan struct{})}
}

func (h *batchHook) arm() { h.armed.Store(true) }

// sent records a send of cmds, holding the first.
func (h *batchHook) sent(cmds []redis.Cmder) {
	n := 0
	for _, c := range cmds {
		switch c.Name() {
		case "fcall", "evalsha", "eval":
			n++
		}
	}
	if n == 0 || !h.armed.Load() {
		return
	}
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.held)
		<-h.release
	}
	h.mu.Lock()
	h.sizes = append(h.sizes, n)
	h.mu.Unlock()
}

func (h *batchHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *batchHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.sent([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *batchHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.sent(cmds)
		return next(ctx, cmds)
	}
}

// largest is the most commands one pipeline carried.
func (h *batchHook) largest() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.sizes {
		n = max(n, s)
	}
	return n
}

// heldProvider is a provider on miniredis whose client carries a new
// batchHook, and whose first script call is being held by it; first answers
// that call once the hook's release is closed.
func heldProvider(t *testing.T) (p *partition, h *batchHook, first <-chan error) {
	t.Helper()
	h = newBatchHook()
	p = hookedProvider(t, h)
	answer := make(chan error, 1)
	go func() { answer <- p.EnqueueForWorker(context.Background(), activity(-1)) }()
	<-h.held
	return p, h, answer
}

// hookedProvider is a provider on miniredis whose client carries h.
func hookedProvider(t *testing.T, h *batchHook) *partition {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	c.AddHook(h)
	t.Cleanup(func() { c.Close() })
	p, err := openPartition(context.Background(), Options{Client: c, AutoPipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if p.pipe == nil {
		t.Fatal("no autopipeliner on a *redis.Client")
	}
	h.arm()
	return p
}

func activity(i int) duroxide.WorkItem {
	return duroxide.ActivityExecute{Instance: fmt.Sprintf("pipe-%d", i), ExecutionID: 1, ID: 1, Name: "a", Input: "x"}
}

// Concurrent script calls share pipelines, and each caller still gets its
// own outcome: enqueues that succeed and abandons of unknown locks that fail
// with ErrLockLost, side by side. The first pipeline is held until every
// caller is running, so the calls queue behind it and leave in batches.
func TestAutoPipelineSharesBatchesWithPerCallErrors(t *testing.T) {
	t.Parallel()
	p, h, first := heldProvider(t)
	ctx := context.Background()

	const callers, calls = 16, 10
	var started, done sync.WaitGroup
	errs := make(chan error, 2*callers*calls)
	for w := range callers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			for i := range calls {
				if err := p.EnqueueForWorker(ctx, activity(w*calls+i)); err != nil {
					errs <- fmt.Errorf("enqueue: %w", err)
				}
				err := p.AbandonWorkItem(ctx, fmt.Sprintf("no-such-token-%d-%d", w, i), 0, false)
				if !errors.Is(err, duroxide.ErrLockLost) {
					errs <- fmt.Errorf("abandon of an unknown lock: got %v, want ErrLockLost", err)
				}
			}
		}()
	}
	started.Wait()
	close(h.release)
	done.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := h.largest(); n < 2 {
		t.Fatalf("largest pipeline carried %d calls: concurrent calls were not batched", n)
	}
	// every enqueue landed exactly once
	for i := range callers*calls + 1 {
		item, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
		if err != nil || item == nil {
			t.Fatalf("fetch %d of %d: item %v, err %v", i, callers*calls+1, item, err)
		}
	}
	if item, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly()); err != nil || item != nil {
		t.Fatalf("extra item %v (err %v) after all enqueued ones", item, err)
	}
}

// A caller whose context ends while its call waits behind a pipeline that
// does not come back is answered at once with the context's error; the
// calls that follow are unaffected.
func TestAutoPipelineCancelledCallReturnsPromptly(t *testing.T) {
	t.Parallel()
	p, h, first := heldProvider(t)
	ctx := context.Background()

	cctx, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() { got <- p.EnqueueForWorker(cctx, activity(1)) }()
	cancel()
	err := <-got // the held pipeline is still held: only the context can answer
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: got %v, want context.Canceled", err)
	}
	var pe *duroxide.ProviderError
	if !errors.As(err, &pe) || pe.Operation != "enqueue_for_worker" {
		t.Fatalf("cancelled call: got %#v, want a ProviderError naming enqueue_for_worker", err)
	}

	dctx, stop := context.WithTimeout(ctx, time.Millisecond)
	defer stop()
	<-dctx.Done()
	if err := p.EnqueueForWorker(dctx, activity(2)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call with an expired deadline: got %v, want context.DeadlineExceeded", err)
	}

	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := p.EnqueueForWorker(ctx, activity(3)); err != nil {
		t.Fatalf("call after the cancelled ones: %v", err)
	}
}

// Without Options.AutoPipeline (the default) every call goes on its own: no
// pipeline at all.
func TestNoAutoPipeline(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	h := newBatchHook()
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	c.AddHook(h)
	defer c.Close()
	p, err := openPartition(context.Background(), Options{Client: c})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	h.arm()
	close(h.release)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := p.EnqueueForWorker(context.Background(), activity(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := h.largest(); n != 1 {
		t.Fatalf("a send of %d calls without AutoPipeline, want 1 each", n)
	}
}
