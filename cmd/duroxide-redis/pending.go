package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pendingJSON is the --json form of a pending start: an instance without
// record whose start a runtime fetched and handed back, saying why.
type pendingJSON struct {
	Instance      string  `json:"instance"`
	Orchestration string  `json:"orchestration"`
	Version       string  `json:"version,omitempty"`
	Attempt       uint32  `json:"attempt"`
	MaxAttempts   uint32  `json:"max_attempts"`
	Reason        string  `json:"reason"`
	Message       string  `json:"message"`
	NotedAt       *string `json:"noted_at"`

	notedMs uint64
}

func toPendingJSON(p duroxide.PendingStart) pendingJSON {
	return pendingJSON{Instance: p.Instance, Orchestration: p.Orchestration, Version: p.Version, Attempt: p.Attempt,
		MaxAttempts: p.MaxAttempts, Reason: p.Reason, Message: p.Message(), NotedAt: jsonTime(p.NotedAtMs), notedMs: p.NotedAtMs}
}

// NotedMs is when the note was written, for the templates.
func (p pendingJSON) NotedMs() uint64 { return p.notedMs }

// pendingListLimit bounds the pending starts a listing shows: they share
// one cause or a few, and the provider caps a read anyway.
const pendingListLimit = 100

// pendingStart reads instance's pending-start note (nil: none).
func (s *session) pendingStart(instance string) (*duroxide.PendingStart, error) {
	if s.prov == nil {
		return nil, nil
	}
	return s.prov.PendingStart(s.ctx, instance)
}

// pendingStarts lists the newest pending starts that match the name and
// id-prefix filters of a listing.
func (s *session) pendingStarts(name, prefix string) ([]pendingJSON, error) {
	out := []pendingJSON{}
	if s.prov == nil {
		return out, nil
	}
	notes, err := s.prov.ListPendingStarts(s.ctx, pendingListLimit)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		if (name == "" || n.Orchestration == name) && strings.HasPrefix(n.Instance, prefix) {
			out = append(out, toPendingJSON(n))
		}
	}
	return out, nil
}

// withPendingNote completes a "not found" for instance with its pending
// start, when it has one: the instance is not found because no runtime
// could run its start, and the operator needs to know which.
func (s *session) withPendingNote(op, instance string, err error) error {
	if !errors.Is(err, duroxide.ErrNotFound) {
		return err
	}
	n, nerr := s.pendingStart(instance)
	if nerr != nil || n == nil {
		return err
	}
	return duroxide.Errorf(op, duroxide.ErrNotFound, "instance %s not found: %s", instance, n.Message())
}

// printPendingStarts tables the pending starts under a listing.
func (c *cli) printPendingStarts(pending []pendingJSON) error {
	if len(pending) == 0 {
		return nil
	}
	fmt.Fprintf(c.stdout, "\nPending starts (%d): no runtime that fetched them could run them\n", len(pending))
	now := c.now()
	t := newTable(c.stdout, "  INSTANCE", "ORCHESTRATION", "VERSION", "ATTEMPT", "NOTED", "REASON")
	for _, p := range pending {
		t.row("  "+p.Instance, p.Orchestration, orDash(p.Version), strconv.FormatUint(uint64(p.Attempt), 10)+"/"+strconv.FormatUint(uint64(p.MaxAttempts), 10),
			relTime(msTime(p.notedMs), now), p.Reason)
	}
	return t.flush()
}
