package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// TestScrapeShowsDuroxideMetrics runs the example's workflow on miniredis and
// scrapes its /metrics over a loopback HTTP server.
func TestScrapeShowsDuroxideMetrics(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	a, err := newApp(ctx, "redis://"+m.Addr(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if err := a.runGreetings(ctx, 4); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.metrics)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	if os.Getenv("DXOTEL_PRINT_SCRAPE") != "" {
		t.Log(body)
	}
	for _, want := range []string{
		`duroxide_provider_call_duration_seconds_bucket{duroxide_operation="fetch_work_item",duroxide_outcome="ok"`,
		`duroxide_orchestration_turns_total{duroxide_instance_status="completed"`,
		`duroxide_activity_executions_total{duroxide_outcome="completed"`,
		`duroxide_activity_executions_total{duroxide_outcome="failed"`,
		`duroxide_queue_depth{duroxide_queue="worker"`,
		`duroxide_instances_by_status{duroxide_instance_status="completed"`,
		`duroxide_instances{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	// Four greetings: every one completes; the audits of user1 and user3 fail.
	for prefix, want := range map[string]string{
		`duroxide_orchestration_turns_total{duroxide_instance_status="completed",`: " 4",
		`duroxide_activity_executions_total{duroxide_outcome="completed",`:         " 6",
		`duroxide_activity_executions_total{duroxide_outcome="failed",`:            " 2",
		`duroxide_instances_by_status{duroxide_instance_status="completed",`:       " 4",
	} {
		if line := lineWith(body, prefix); !strings.HasSuffix(line, want) {
			t.Errorf("want %s...%s, got line %q", prefix, want, line)
		}
	}
}

// lineWith returns the first line of body that starts with prefix.
func lineWith(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
