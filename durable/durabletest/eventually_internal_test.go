package durabletest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// poll returns once check holds, after as many reads as it took; with a
// check that never holds it returns, when its context ends, check's last
// error (the context's when check had none).
func TestPoll(t *testing.T) {
	t.Parallel()
	calls := 0
	err := poll(context.Background(), func() (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("poll: %v after %d reads, want nil after 3", err, calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	boom := errors.New("boom")
	if err := poll(ctx, func() (bool, error) { return true, boom }); !errors.Is(err, boom) {
		t.Fatalf("poll of a failing read: %v, want its error", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if err := poll(ctx2, func() (bool, error) { return false, nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("poll that never holds: %v, want the deadline", err)
	}
}
