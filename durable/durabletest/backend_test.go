package durabletest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestBackendsFollowTheEnvironment(t *testing.T) {
	t.Setenv(EnvRedisURL, "")
	t.Setenv(EnvRedisCluster, "")
	if got := names(Backends(t)); got != "miniredis" {
		t.Fatalf("no servers named: backends %s", got)
	}
	t.Setenv(EnvRedisURL, "redis://127.0.0.1:1/0")
	t.Setenv(EnvRedisCluster, "127.0.0.1:2,127.0.0.1:3")
	bs := Backends(t)
	if got := names(bs); got != "miniredis,redis,cluster,cluster-p12" {
		t.Fatalf("both servers named: backends %s", got)
	}
	if !bs[0].Clocked || bs[1].Clocked || bs[2].Clocked || bs[3].Clocked {
		t.Fatalf("only miniredis has a movable clock: %+v", bs)
	}
	if bs[2].Partitions > 1 || bs[3].Partitions != ClusterPartitions {
		t.Fatalf("the Cluster runs with one partition and with %d: %+v", ClusterPartitions, bs)
	}
}

func names(bs []Backend) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return strings.Join(out, ",")
}

// fatalRecorder is a testing.TB whose Fatalf records instead of ending the
// goroutine, so a test can see that a call fails its test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func TestAdvanceOnARealServerFailsTheTest(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	e := &Env{t: rec, Backend: Backend{Name: "redis"}}
	func() {
		defer func() {
			if r := recover(); r != rec {
				t.Fatalf("Advance did not fail the test (recovered %v)", r)
			}
		}()
		e.Advance(time.Hour)
	}()
	if !strings.Contains(rec.msg, "only miniredis's clock can be moved") {
		t.Fatalf("message %q", rec.msg)
	}
	if !e.Now().Before(time.Now().Add(time.Minute)) {
		t.Fatal("the refused Advance moved the clock")
	}
}
