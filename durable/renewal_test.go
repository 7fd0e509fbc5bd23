package durable

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// A renewal that keeps failing transiently is retried only while the lock
// it would extend can still be held; then the renewal reports the loss with
// the last error. A lost lock is reported at once, without a retry.
func TestRenewalRetriesTransientFailuresUntilTheLockWouldHaveExpired(t *testing.T) {
	t.Parallel()
	busy := duroxide.Retryable("renew_orchestration_item_lock", "i/o timeout")
	for name, tc := range map[string]struct {
		err       error
		wantCalls func(int32) bool
	}{
		"transient": {busy, func(n int32) bool { return n > 1 }},
		"lock lost": {&duroxide.ProviderError{Operation: "renew", Message: "expired", Kind: duroxide.ErrLockLost}, func(n int32) bool { return n == 1 }},
		"permanent": {duroxide.Permanent("renew", "bad"), func(n int32) bool { return n == 1 }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			lost := make(chan error, 1)
			began := time.Now()
			const lock = 400 * time.Millisecond
			stop := startRenewal(context.Background(), 10*time.Millisecond, lock, func(context.Context) error {
				calls.Add(1)
				return tc.err
			}, func(err error) { lost <- err })
			defer stop()
			err := <-lost
			if !errors.Is(err, tc.err) {
				t.Fatalf("lost with %v, want %v", err, tc.err)
			}
			if n := calls.Load(); !tc.wantCalls(n) {
				t.Fatalf("%d renewal calls", n)
			}
			if tc.err == busy && time.Since(began) > lock+time.Second {
				t.Fatalf("gave up after %v, the lock was gone after %v", time.Since(began), lock)
			}
		})
	}
}
