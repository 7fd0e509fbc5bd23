package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// outputWidth is how much of an output or KV value the people's view of
// show prints.
const outputWidth = 200

// executionJSON is the --json form of one execution.
type executionJSON struct {
	Execution   uint64  `json:"execution"`
	Status      string  `json:"status"`
	Output      *string `json:"output"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Events      int     `json:"events"`

	startedMs, completedMs uint64 // for relative times in tables
}

// customStatusJSON is the --json form of an instance's custom status.
type customStatusJSON struct {
	Status  *string `json:"status"`
	Version uint64  `json:"version"`
}

// instanceDetail is everything show reports about one instance.
type instanceDetail struct {
	instanceJSON
	Executions   []executionJSON   `json:"executions"`
	CustomStatus *customStatusJSON `json:"custom_status"`
	KV           map[string]string `json:"kv"`
	Children     []string          `json:"children"`
	// Pending is set, with Status "Pending", for an instance that has no
	// record yet because no runtime that fetched its start could run it.
	Pending *pendingJSON `json:"pending,omitempty"`
	// Paused is set for a paused instance (duroxide-redis pause).
	Paused *pausedJSON `json:"paused,omitempty"`
}

// pausedJSON is the pause state of a paused instance.
type pausedJSON struct {
	Since *string `json:"since"`
	// Held counts the messages waiting for its next turn.
	Held uint64 `json:"held"`
	// ByName: its orchestration name is paused (duroxide-redis flow pause),
	// which holds it until the name is resumed.
	ByName  bool `json:"by_name,omitempty"`
	sinceMs uint64
}

func runShow(c *cli, args []string) error {
	return inspect(c, c.flags("show"), args, (*session).detail, c.printDetail)
}

// detail gathers an instance's record, executions, custom status, KV store
// and children: each read from its own record or index.
func (s *session) detail(instance string) (instanceDetail, error) {
	const op = "show"
	info, err := s.instanceInfo(op, instance)
	if errors.Is(err, duroxide.ErrNotFound) {
		if n, nerr := s.pendingStart(instance); nerr != nil || n != nil {
			return pendingDetail(n), nerr
		}
	}
	if err != nil {
		return instanceDetail{}, err
	}
	d := instanceDetail{instanceJSON: toInstanceJSON(info), Executions: []executionJSON{}}
	ps, err := s.pauseState(info)
	if err != nil {
		return d, err
	}
	if ps.Paused {
		d.Paused = &pausedJSON{Since: jsonTime(ps.SinceMs), Held: ps.Held, ByName: ps.NamePaused, sinceMs: ps.SinceMs}
	}
	if d.Executions, err = s.executions(instance); err != nil {
		return d, err
	}
	cs, err := s.prov.GetCustomStatus(s.ctx, instance, 0)
	if err != nil {
		return d, err
	}
	if cs != nil {
		d.CustomStatus = &customStatusJSON{Status: cs.Status, Version: cs.Version}
	}
	if d.KV, err = s.client.KVAllValues(s.ctx, instance); err != nil {
		return d, err
	}
	if d.KV == nil {
		d.KV = map[string]string{}
	}
	if d.Children, err = s.admin.ListChildren(s.ctx, instance); err != nil {
		return d, err
	}
	if d.Children == nil {
		d.Children = []string{}
	}
	return d, nil
}

func (s *session) executions(instance string) ([]executionJSON, error) {
	ids, err := s.admin.ListExecutions(s.ctx, instance)
	if err != nil {
		return nil, err
	}
	out := make([]executionJSON, 0, len(ids))
	for _, id := range ids {
		e, err := s.admin.GetExecutionInfo(s.ctx, instance, id)
		if err != nil {
			return nil, err
		}
		out = append(out, executionJSON{
			Execution: e.ExecutionID, Status: e.Status, Output: e.Output,
			StartedAt: jsonTime(e.StartedAt), CompletedAt: jsonTime(e.CompletedAt), Events: e.EventCount,
			startedMs: e.StartedAt, completedMs: e.CompletedAt,
		})
	}
	return out, nil
}

// pendingDetail is what show reports of a pending start: there is no
// record, execution, KV or child to read yet.
func pendingDetail(n *duroxide.PendingStart) instanceDetail {
	if n == nil {
		return instanceDetail{}
	}
	p := toPendingJSON(*n)
	return instanceDetail{
		instanceJSON: instanceJSON{Instance: n.Instance, Name: n.Orchestration, Version: n.Version, Status: "Pending"},
		Executions:   []executionJSON{}, KV: map[string]string{}, Children: []string{}, Pending: &p,
	}
}

func (c *cli) printDetail(d instanceDetail) error {
	now := c.now()
	if p := d.Pending; p != nil {
		kv := newTable(c.stdout)
		kv.row("Instance:", d.Instance)
		kv.row("Orchestration:", p.Orchestration+" "+orDash(p.Version))
		kv.row("Status:", "Pending")
		kv.row("Pending:", p.Message)
		kv.row("Noted:", relTime(msTime(p.notedMs), now))
		if p.Attempt == 0 {
			kv.row("Hint:", "it runs when a running instance of "+p.Orchestration+" ends: duroxide-redis limits list")
		} else {
			kv.row("Hint:", "register the orchestration (and version) in a runtime, or it fails as poison after attempt "+strconv.FormatUint(uint64(p.MaxAttempts), 10))
		}
		return kv.flush()
	}
	kv := newTable(c.stdout)
	kv.row("Instance:", d.Instance)
	kv.row("Orchestration:", d.Name+" "+d.Version)
	kv.row("Status:", d.Status)
	if p := d.Paused; p != nil {
		how := "duroxide-redis resume " + d.Instance
		if p.ByName {
			how = "its orchestration is paused: duroxide-redis flow resume " + d.Name
		}
		kv.row("Paused:", fmt.Sprintf("since %s, held: %d (%s)", relTime(msTime(p.sinceMs), now), p.Held, how))
	}
	kv.row("Execution:", strconv.FormatUint(d.Execution, 10))
	kv.row("Parent:", orDash(d.Parent))
	kv.row("Created:", relTime(msTime(d.createdMs), now))
	kv.row("Updated:", relTime(msTime(d.updatedMs), now))
	outputLabel := "Output:"
	if d.Status == "Failed" {
		outputLabel = "Failure:" // a failed instance's output is its error
	}
	kv.row(outputLabel, abbreviate(optional(d.Output), outputWidth))
	kv.row("Custom status:", customStatusText(d.CustomStatus))
	if err := kv.flush(); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, "\nExecutions:")
	t := newTable(c.stdout, "  EXECUTION", "STATUS", "STARTED", "COMPLETED", "EVENTS", "OUTPUT")
	for _, e := range d.Executions {
		t.row("  "+strconv.FormatUint(e.Execution, 10), e.Status, relTime(msTime(e.startedMs), now), relTime(msTime(e.completedMs), now),
			strconv.Itoa(e.Events), abbreviate(optional(e.Output), payloadWidth))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nKV (%d):\n", len(d.KV))
	t = newTable(c.stdout)
	for _, k := range sortedKeys(d.KV) {
		t.row("  "+k, abbreviate(d.KV[k], outputWidth))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nChildren (%d):\n", len(d.Children))
	for _, ch := range d.Children {
		fmt.Fprintln(c.stdout, "  "+ch)
	}
	return nil
}

func customStatusText(cs *customStatusJSON) string {
	if cs == nil || cs.Status == nil {
		return "-"
	}
	return fmt.Sprintf("%s (version %d)", abbreviate(*cs.Status, outputWidth), cs.Version)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
