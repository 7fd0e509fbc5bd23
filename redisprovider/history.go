package redisprovider

import (
	"context"
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Read returns the events of the instance's latest execution (the highest
// execution id that has a record, whether or not the instance has one),
// ordered by event id; empty for an unknown instance. Stored data that cannot be decoded
// is a permanent error: a partial history would be silently wrong.
func (p *partition) Read(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return p.readHistory(ctx, "read", instance, "", false)
}

// ReadWithExecution returns the events of one execution, ordered by event id.
func (p *partition) ReadWithExecution(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return p.readHistory(ctx, "read_with_execution", instance, strconv.FormatUint(executionID, 10), false)
}

// Reply of lua/read_history.lua.
const (
	readExecution = iota
	readEvents
	readKnown // 1: the latest execution was asked for and exists, or the instance has a record
)

// readHistory reads one execution (” = the latest one) in one script, so
// the execution it resolves and the events it returns belong together.
// mustExist makes an instance with neither a record nor an execution a
// not-found error.
func (p *partition) readHistory(ctx context.Context, op, instance, execution string, mustExist bool) ([]duroxide.Event, error) {
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance).str(execution)
	res, err := p.run(ctx, op, scriptReadHistory, a)
	if err != nil {
		return nil, err
	}
	r := newReply(op, res)
	eid, _ := r.str(readExecution)
	raw, known := r.strs(readEvents), r.int(readKnown) == 1
	if r.err != nil {
		return nil, r.err
	}
	if mustExist && !known {
		return nil, notFound(op, "instance "+instance)
	}
	x, err := strconv.ParseUint(eid, 10, 64)
	if err != nil {
		return nil, undecodable(op, "instance %s: corrupt execution id %q", instance, eid)
	}
	events, problem := decodeHistory(raw, x)
	if problem != "" {
		return nil, undecodable(op, "instance %s: %s", instance, problem)
	}
	return events, nil
}

// AppendWithExecution appends events to one execution outside a turn. Ids
// must be non-zero and follow the last stored id; otherwise nothing is
// written and the error is permanent.
func (p *partition) AppendWithExecution(ctx context.Context, instance string, executionID uint64, events []duroxide.Event) error {
	const op = "append_with_execution"
	if instance == "" {
		return invalid(op, "empty instance id")
	}
	if executionID == 0 {
		return invalid(op, "execution id 0")
	}
	var a args
	a.str(instance).u64(executionID)
	if err := appendEvents(op, &a, events); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	_, err := p.run(ctx, op, scriptAppendWithExecution, a)
	return err
}
