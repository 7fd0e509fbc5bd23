package durabletest

import (
	"context"
	"slices"
	"testing"
)

// WaitForFirings waits until schedule has recorded at least n firings
// with outcome "started" and returns their instance ids, oldest nominal
// time first. Time skips while it waits (as Wait), to each schedule's next
// due time when nothing else can run, so a daily schedule's firings come at
// once (docs/schedules.md's "Schedules" shows it). It fails the test if they do
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
	ok := false
	e.waitSkipping(func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultWaitTimeout)
		defer cancel()
		ok = poll(ctx, func() (bool, error) { return check(), nil }) == nil
	})
	if !ok {
		t.Fatalf("durabletest: schedule %s: %d of %d started firings within %v (last error: %v)", schedule, len(ids), n, DefaultWaitTimeout, last)
	}
	return slices.Clone(ids)
}
