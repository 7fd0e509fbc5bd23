package durable

import (
	"errors"
	"testing"
	"time"
)

func mustCompile(t *testing.T, s Schedule) *timetable {
	t.Helper()
	if s.ID == "" {
		s.ID = "s"
	}
	if s.Orchestration == "" {
		s.Orchestration = "O"
	}
	tt, err := compile("test", s)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func TestScheduleTimes(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	from := at("2026-03-28T23:59:30Z")
	cases := []struct {
		name string
		s    Schedule
		want []string
	}{
		{"five fields", Schedule{Cron: "0 */12 * * *"}, []string{"2026-03-29T00:00:00Z", "2026-03-29T12:00:00Z"}},
		{"six fields, seconds first", Schedule{Cron: "*/20 * * * * *"}, []string{"2026-03-28T23:59:40Z", "2026-03-29T00:00:00Z"}},
		{"descriptor", Schedule{Cron: "@daily"}, []string{"2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"}},
		{"@every", Schedule{Cron: "@every 45m"}, []string{"2026-03-29T00:44:30Z", "2026-03-29T01:29:30Z"}},
		// Paris moves to summer time on 2026-03-29: 02:30 does not exist that day
		{"time zone", Schedule{Cron: "30 1 * * *", TimeZone: "Europe/Paris"}, []string{"2026-03-29T00:30:00Z", "2026-03-29T23:30:00Z"}},
		{"CRON_TZ prefix", Schedule{Cron: "CRON_TZ=America/New_York 0 9 * * *"}, []string{"2026-03-29T13:00:00Z", "2026-03-30T13:00:00Z"}},
		{"interval from the epoch", Schedule{Every: 7 * time.Hour}, []string{"2026-03-29T05:00:00Z", "2026-03-29T12:00:00Z"}},
		{"interval from StartAt", Schedule{Every: time.Hour, StartAt: at("2026-03-29T05:15:00Z")}, []string{"2026-03-29T05:15:00Z", "2026-03-29T06:15:00Z"}},
		{"EndAt", Schedule{Cron: "@hourly", EndAt: at("2026-03-29T01:00:00Z")}, []string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"}},
	}
	for _, tc := range cases {
		tt := mustCompile(t, tc.s)
		var got []string
		for n := tt.next(from); !n.IsZero() && len(got) < 3; n = tt.next(n) {
			got = append(got, n.Format(time.RFC3339))
		}
		if len(got) > len(tc.want) && tc.name != "EndAt" {
			got = got[:len(tc.want)]
		}
		if len(got) != len(tc.want) || got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestScheduleJitterIsTheSameEverywhereAndBounded(t *testing.T) {
	t.Parallel()
	tt := mustCompile(t, Schedule{Cron: "@hourly", Jitter: 10 * time.Minute})
	n := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spread := map[time.Duration]bool{}
	for i := range 50 {
		at := n.Add(time.Duration(i) * time.Hour)
		j := tt.jitter(at)
		if j < 0 || j > 10*time.Minute || j != mustCompile(t, Schedule{Cron: "@hourly", Jitter: 10 * time.Minute}).jitter(at) {
			t.Fatalf("jitter %v at %v", j, at)
		}
		spread[j] = true
	}
	if len(spread) < 10 {
		t.Fatalf("50 firings got %d distinct jitters", len(spread))
	}
}

func TestScheduleRejectsBadDefinitions(t *testing.T) {
	t.Parallel()
	for _, s := range []Schedule{
		{Orchestration: "O", Cron: "@daily"},             // no id
		{ID: "a\nb", Orchestration: "O", Cron: "@daily"}, // line break
		{ID: "s", Cron: "@daily"},                        // no orchestration
		{ID: "s", Orchestration: "O"},                    // no times
		{ID: "s", Orchestration: "O", Cron: "@daily", Every: time.Hour},
		{ID: "s", Orchestration: "O", Cron: "61 * * * *"},
		{ID: "s", Orchestration: "O", Cron: "* * * * * * *"},
		{ID: "s", Orchestration: "O", Every: time.Millisecond},
		{ID: "s", Orchestration: "O", Cron: "@daily", TimeZone: "Mars/Olympus"},
		{ID: "s", Orchestration: "O", Cron: "@daily", Overlap: "sometimes"},
		{ID: "s", Orchestration: "O", Cron: "@daily", Jitter: -time.Second},
		{ID: "s", Orchestration: "O", Cron: "@daily", StartAt: time.Unix(100, 0), EndAt: time.Unix(50, 0)},
	} {
		_, err := compile("create_schedule", s)
		var ie *InvalidInputError
		if !errors.Is(err, ErrInvalidInput) || !errors.As(err, &ie) || ie.Op != "create_schedule" {
			t.Errorf("%+v: %v, want an *InvalidInputError of create_schedule", s, err)
		}
	}
}
