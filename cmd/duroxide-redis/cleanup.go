package main

import (
	"fmt"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// bulkBatch is how many root instances one bulk call handles, so no single
// Redis step runs long.
const bulkBatch = 1000

// deleteJSON is the --json answer of delete.
type deleteJSON struct {
	Instances  uint64 `json:"instances_deleted"`
	Executions uint64 `json:"executions_deleted"`
	Events     uint64 `json:"events_deleted"`
	Messages   uint64 `json:"queue_messages_deleted"`
}

// pruneJSON is the --json answer of prune.
type pruneJSON struct {
	Instances  uint64 `json:"instances_processed"`
	Executions uint64 `json:"executions_deleted"`
	Events     uint64 `json:"events_deleted"`
}

func runDelete(c *cli, args []string) error {
	fs := c.flags("delete")
	force := fs.Bool("force", false, "delete INSTANCE even while it runs")
	before := fs.String("completed-before", "", "delete every terminal root instance completed before this time (RFC 3339, or a duration ago such as 720h)")
	pos, err := c.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if (len(pos) == 1) == (*before != "") {
		return usageErr("delete", "give either INSTANCE or --completed-before, not both or neither")
	}
	var cutoff time.Time
	if *before != "" {
		if cutoff, err = c.parseCutoff(*before); err != nil {
			return err
		}
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	var res duroxide.DeleteInstanceResult
	if len(pos) == 1 {
		res, err = s.deleteOne(pos[0], *force)
	} else {
		res, err = s.deleteCompletedBefore(cutoff)
	}
	if err != nil {
		return err
	}
	out := deleteJSON{res.InstancesDeleted, res.ExecutionsDeleted, res.EventsDeleted, res.QueueMessagesDeleted}
	if c.json {
		return writeJSON(c.stdout, out)
	}
	_, err = fmt.Fprintf(c.stdout, "deleted %d instances (%d executions, %d events, %d queued messages)\n",
		out.Instances, out.Executions, out.Events, out.Messages)
	return err
}

// deleteOne deletes a root instance with its tree, refusing up front the
// cases the provider would refuse, with a message that says what to do.
func (s *session) deleteOne(instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	const op = "delete"
	info, err := s.instanceInfo(op, instance)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	if info.ParentInstanceID != "" {
		return duroxide.DeleteInstanceResult{}, duroxide.Errorf(op, duroxide.ErrConflict,
			"instance %s is a sub-orchestration of %s: delete its root instead", instance, info.ParentInstanceID)
	}
	if info.Status == "Running" && !force {
		return duroxide.DeleteInstanceResult{}, duroxide.Errorf(op, duroxide.ErrConflict,
			"instance %s is Running: cancel it first, or pass --force", instance)
	}
	return s.admin.DeleteInstance(s.ctx, instance, force)
}

// deleteCompletedBefore deletes terminal roots in batches until a batch
// finds nothing more to delete.
func (s *session) deleteCompletedBefore(cutoff time.Time) (duroxide.DeleteInstanceResult, error) {
	var total duroxide.DeleteInstanceResult
	filter := duroxide.InstanceFilter{CompletedBefore: uint64(cutoff.UnixMilli()), Limit: bulkBatch}
	for {
		res, err := s.admin.DeleteInstanceBulk(s.ctx, filter)
		total.InstancesDeleted += res.InstancesDeleted
		total.ExecutionsDeleted += res.ExecutionsDeleted
		total.EventsDeleted += res.EventsDeleted
		total.QueueMessagesDeleted += res.QueueMessagesDeleted
		if err != nil || res.InstancesDeleted == 0 {
			return total, err
		}
	}
}

// parseCutoff reads an RFC 3339 time, or a duration meaning that long ago.
func (c *cli) parseCutoff(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return c.now().Add(-d), nil
	}
	return time.Time{}, usageErr("delete", "--completed-before %q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a duration (720h)", v)
}

func runPrune(c *cli, args []string) error {
	fs := c.flags("prune")
	all := fs.Bool("all", false, "prune every instance")
	keepLast := fs.Int("keep-last", 0, "executions to keep per instance, the current one included (required, at least 1)")
	pos, err := c.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if (len(pos) == 1) == *all {
		return usageErr("prune", "give either INSTANCE or --all, not both or neither")
	}
	if *keepLast < 1 {
		return usageErr("prune", "--keep-last N is required, N at least 1 (the current execution is always kept)")
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	opts := duroxide.PruneOptions{KeepLast: *keepLast}
	var res duroxide.PruneResult
	if *all {
		res, err = s.pruneAll(opts)
	} else if _, err = s.instanceInfo("prune", pos[0]); err == nil {
		res, err = s.admin.PruneExecutions(s.ctx, pos[0], opts)
	}
	if err != nil {
		return err
	}
	out := pruneJSON{res.InstancesProcessed, res.ExecutionsDeleted, res.EventsDeleted}
	if c.json {
		return writeJSON(c.stdout, out)
	}
	_, err = fmt.Fprintf(c.stdout, "pruned %d executions (%d events) of %d instances\n", out.Executions, out.Events, out.Instances)
	return err
}

// pruneAll prunes every instance, a page of the index per call: a bulk call
// without ids would handle the same first batch every time. Pruning never
// removes an instance, so the pages stay put under it.
func (s *session) pruneAll(opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	var total duroxide.PruneResult
	for cursor := ""; ; {
		infos, next, err := s.page(duroxide.InstancePageFilter{}, cursor, bulkBatch)
		if err != nil {
			return total, err
		}
		batch := make([]string, len(infos))
		for i, info := range infos {
			batch[i] = info.InstanceID
		}
		if len(batch) > 0 {
			res, err := s.admin.PruneExecutionsBulk(s.ctx, duroxide.InstanceFilter{InstanceIDs: batch, Limit: len(batch)}, opts)
			total.InstancesProcessed += res.InstancesProcessed
			total.ExecutionsDeleted += res.ExecutionsDeleted
			total.EventsDeleted += res.EventsDeleted
			if err != nil {
				return total, err
			}
		}
		if next == "" {
			return total, nil
		}
		cursor = next
	}
}
