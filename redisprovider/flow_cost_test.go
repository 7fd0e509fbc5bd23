package redisprovider

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// monitored runs work under MONITOR on the server of rdb (a plain
// connection of its own: go-redis's monitor stops at its read timeout) and
// returns the commands the server ran meanwhile, scripts' own included.
func monitored(t *testing.T, rdb *redis.Client, work func()) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := net.Dial("tcp", rdb.Options().Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	if first, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(first, "+OK") {
		t.Fatalf("MONITOR answered %q %v", first, err)
	}
	work()
	end := fmt.Sprintf("flow-cost-end-%d", time.Now().UnixNano())
	if err := rdb.Echo(ctx, end).Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("MONITOR after %d lines: %v", len(lines), err)
		}
		if strings.Contains(line, end) {
			return lines
		}
		lines = append(lines, line)
	}
}

// A namespace without flow settings pays for them one EXISTS per script
// call that files or fetches work, and reads no field of the settings nor
// any limit (a limit marks the settings, so the EXISTS answers for it); one
// with a priority set reads it (which shows the count sees scripts'
// commands). Real Redis only: miniredis has no MONITOR.
func TestFlowSettingsCostNothingUnset(t *testing.T) {
	p, rdb := openMonitored(t, "flowcost")
	ctx := context.Background()
	flowKey, limKey := p.keys.Flow(), p.keys.Limits()
	turn := func(inst string) {
		if err := p.EnqueueForOrchestrator(ctx, orchStart(inst, "O"), 0); err != nil {
			t.Fatal(err)
		}
		item, err := p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		for err == nil && item != nil && item.Instance != inst {
			// the last turn's activity completion: a turn of its own
			if err := p.AckOrchestrationItem(ctx, item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1}); err != nil {
				t.Fatal(err)
			}
			item, err = p.FetchOrchestrationItem(ctx, time.Minute, 0, nil)
		}
		if err != nil || item == nil {
			t.Fatalf("fetch: %v %v", item, err)
		}
		commit := startedAs(inst, "O")
		commit.WorkerItems = []duroxide.WorkItem{duroxide.ActivityExecute{Instance: inst, ExecutionID: 1, ID: 2, Name: "A", Input: `""`}}
		if err := p.AckOrchestrationItem(ctx, item.LockToken, commit); err != nil {
			t.Fatal(err)
		}
		w, err := p.FetchWorkItem(ctx, time.Minute, 0, nil, duroxide.DefaultOnly())
		if err != nil || w == nil {
			t.Fatalf("work fetch: %v %v", w, err)
		}
		if err := p.AckWorkItem(ctx, w.LockToken, duroxide.ActivityCompleted{Instance: inst, ExecutionID: 1, ID: 2, Result: `""`}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(lines []string) (scripts, exists, reads int) {
		for _, l := range lines {
			lower := strings.ToLower(l)
			switch {
			case strings.Contains(lower, `"evalsha"`) || strings.Contains(lower, `"fcall"`) || strings.Contains(lower, `"eval"`):
				scripts++
			case strings.Contains(l, `"`+flowKey+`"`) && strings.Contains(lower, `"exists"`):
				exists++
			case strings.Contains(l, `"`+flowKey+`"`), strings.Contains(l, `"`+limKey+`"`):
				reads++
			}
		}
		return
	}
	scripts, exists, reads := count(monitored(t, rdb, func() { turn("a") }))
	if scripts == 0 || exists > scripts || reads != 0 {
		t.Fatalf("unset: %d scripts ran %d EXISTS and %d other commands on the settings, want at most one EXISTS each and nothing else", scripts, exists, reads)
	}
	if _, err := p.SetPriority(ctx, duroxide.ActivityName, "A", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, reads := count(monitored(t, rdb, func() { turn("b") })); reads == 0 {
		t.Fatal("set: no script read the settings")
	}
}

// openMonitored opens a fresh namespace (prefix and a unique suffix) of one
// partition on the real Redis at $DUROXIDE_REDIS_URL, for the tests that
// count a script's commands with MONITOR, which miniredis lacks; it skips
// the test without one. The client is the one MONITOR is read through.
func openMonitored(t *testing.T, prefix string) (*partition, *redis.Client) {
	t.Helper()
	url := os.Getenv("DUROXIDE_REDIS_URL")
	if url == "" {
		t.Skip("DUROXIDE_REDIS_URL is not set: no real Redis to monitor")
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	p, err := openPartition(context.Background(), Options{Client: rdb, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, rdb
}
