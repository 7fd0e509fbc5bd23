package durabletest

import (
	"context"
	"testing"
	"time"
)

// Backoff of the reads of Eventually and of the Env's waits on stored
// state: a state that comes at once costs a millisecond, one that takes a
// turn costs at most one read per 20 ms.
const (
	pollStart = time.Millisecond
	pollMax   = 20 * time.Millisecond
)

// Eventually waits until check reports true, reading again after 1 ms,
// then with a backoff up to every 20 ms, for DefaultWaitTimeout. It fails
// the test naming what it waited for and check's last error. For state
// that only a read shows (a pause's held count, a schedule's firing
// records, a custom status), where no Wait method of Env applies:
//
//	durabletest.Eventually(t, "a message held for order-1", func() (bool, error) {
//		st, err := env.Client.PauseState(ctx, "order-1")
//		return st.Held > 0, err
//	})
//
// Eventually does not skip time: use it where nothing waits for a timer,
// or call Env.Advance first.
func Eventually(t testing.TB, what string, check func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultWaitTimeout)
	defer cancel()
	if err := poll(ctx, check); err != nil {
		t.Fatalf("durabletest: %s: not within %v (last error: %v)", what, DefaultWaitTimeout, err)
	}
}

// poll runs check until it reports true (nil) or ctx ends (check's last
// error, or ctx's when check had none).
func poll(ctx context.Context, check func() (bool, error)) error {
	var last error
	for delay := pollStart; ; delay = min(2*delay, pollMax) {
		ok, err := check()
		if ok && err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return last
		case <-time.After(delay):
		}
	}
}
