package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// writeHistory prints one execution's history, an event per line: its id,
// the event it answers (when it answers one), its kind and what it holds.
func writeHistory(w io.Writer, title string, events []duroxide.Event) {
	fmt.Fprintf(w, "\nhistory of %s (%d events)\n", title, len(events))
	for _, ev := range events {
		src := ""
		if ev.SourceEventID != nil {
			src = fmt.Sprintf("<- #%d", *ev.SourceEventID)
		}
		fmt.Fprintf(w, "  #%-3d %-7s %-26s %s\n", ev.EventID, src, ev.Kind.EventType(), describe(ev.Kind))
	}
}

// describe renders what an event kind holds, shortened to one line.
func describe(k duroxide.EventKind) string {
	switch k := k.(type) {
	case duroxide.OrchestrationStartedEvent:
		s := fmt.Sprintf("%s %s input %s", k.Name, k.Version, short(k.Input))
		if k.ParentInstance != nil {
			s += " (child of " + *k.ParentInstance + ")"
		}
		return s
	case duroxide.OrchestrationCompletedEvent:
		return "output " + short(k.Output)
	case duroxide.OrchestrationFailedEvent:
		return details(k.Details)
	case duroxide.ActivityScheduledEvent:
		return fmt.Sprintf("%s(%s)", k.Name, short(k.Input))
	case duroxide.ActivityCompletedEvent:
		return "result " + short(k.Result)
	case duroxide.ActivityFailedEvent:
		return details(k.Details)
	case duroxide.TimerCreatedEvent:
		return "fires at " + clock(k.FireAtMs)
	case duroxide.TimerFiredEvent:
		return "fired, due at " + clock(k.FireAtMs)
	case duroxide.ExternalSubscribedEvent:
		return "waits for " + k.Name
	case duroxide.ExternalEventEvent:
		return fmt.Sprintf("%s: %s", k.Name, short(k.Data))
	case duroxide.SubOrchestrationScheduledEvent:
		return fmt.Sprintf("%s as %s, input %s", k.Name, k.Instance, short(k.Input))
	case duroxide.SubOrchestrationCompletedEvent:
		return "result " + short(k.Result)
	case duroxide.SubOrchestrationFailedEvent:
		return details(k.Details)
	case duroxide.CustomStatusUpdatedEvent:
		if k.Status == nil {
			return "(cleared)"
		}
		return fmt.Sprintf("%q", *k.Status)
	}
	return ""
}

// details renders an error's details: an application error's message, or
// the serialized details of any other kind.
func details(d duroxide.ErrorDetails) string {
	if d.Application != nil {
		return d.Application.Message
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// short cuts a long payload so an event stays on one line.
func short(s string) string {
	const limit = 90
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

// clock renders a fire time (ms since the epoch) as a time of day.
func clock(ms uint64) string {
	return time.UnixMilli(int64(ms)).UTC().Format("15:04:05.000")
}
