package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// payloadWidth is how many characters of a payload a table cell shows; the
// full value is one --json away.
const payloadWidth = 60

// table writes aligned columns for people, under a header when one is given; cells are sanitised so that a
// payload holding tabs or newlines cannot break the alignment.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = oneLine(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// oneLine replaces the control characters that would break a table row.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// abbreviate shortens s to at most n characters, marking the cut with "…".
func abbreviate(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// msTime converts the providers' milliseconds since the epoch; 0 means unset.
func msTime(ms uint64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// relTime renders t relative to now ("3m ago", "in 5s"), "-" when unset.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < -time.Second:
		return "in " + shortDuration(-d)
	case d < time.Second:
		return "just now"
	}
	return shortDuration(d) + " ago"
}

// shortDuration keeps the largest unit people care about: 90s -> "1m30s",
// 26h -> "1d2h".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// optional renders a nil string pointer as "-".
func optional(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// writeJSON writes v indented; scripts read it, people may too.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeJSONLine writes v as one compact line, for streams of objects.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonTime is the --json form of a provider timestamp: RFC 3339 in UTC, or
// null when unset, so scripts need not know the milliseconds convention.
func jsonTime(ms uint64) *string {
	if ms == 0 {
		return nil
	}
	s := msTime(ms).UTC().Format(time.RFC3339Nano)
	return &s
}
