package durabletest

import (
	"context"
	"slices"
	"testing"
	"time"
)

// WaitForFirings waits until schedule has recorded at least n firings
// with outcome "started" and returns their instance ids, oldest nominal
// time first. Time skips while it waits (as Wait), to each schedule's next
// due time when nothing else can run, so a daily schedule's firings come at
// once (the README's "Schedules" shows it). It fails the test if they do
// not come within DefaultWaitTimeout.
func (e *Env) WaitForFirings(t testing.TB, schedule string, n int) []string {
	t.Helper()
	var (
		ids  []string
		last error
	)
	check := func() bool {
		d, err := e.Client.DescribeSchedule(context.Background(), schedule, 0)
		if err != nil {
			last = err
			return false
		}
		ids = ids[:0]
		for _, f := range slices.Backward(d.Recent) {
			if f.Outcome == "started" {
				ids = append(ids, f.Instance)
			}
		}
		return len(ids) >= n
	}
	deadline := time.Now().Add(DefaultWaitTimeout)
	ok := false
	e.waitSkipping(func() {
		delay := time.Millisecond
		for !ok && time.Now().Before(deadline) {
			if ok = check(); !ok {
				time.Sleep(delay)
				delay = min(2*delay, 20*time.Millisecond)
			}
		}
	})
	if !ok {
		t.Fatalf("durabletest: schedule %s: %d of %d started firings within %v (last error: %v)", schedule, len(ids), n, DefaultWaitTimeout, last)
	}
	return slices.Clone(ids)
}
