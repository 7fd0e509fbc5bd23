package redisprovider

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

const (
	// pruneBatch is how many instances one prune script call handles.
	pruneBatch = 100
	// bulkBatch is how many root instances (with their trees) one bulk
	// deletion script call examines.
	bulkBatch = 100
)

// DeleteInstancesAtomic deletes the given instances and everything stored
// for them in one script, all or nothing. Without force it refuses when one
// of them is Running; it always refuses when a child of one of them is not
// in the list. Only instances that existed are counted.
func (p *partition) DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instances_atomic"
	unique := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id == "" {
			return duroxide.DeleteInstanceResult{}, invalid(op, "empty instance id")
		}
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	if len(unique) == 0 {
		return duroxide.DeleteInstanceResult{}, nil
	}
	var a args
	a.flag(force).int(len(unique))
	for _, id := range unique {
		a.str(id)
	}
	return p.deleteScript(ctx, op, scriptDeleteInstancesAtomic, a)
}

// DeleteInstance deletes a root instance with all its descendants, in one
// script that reads the tree itself. A sub-orchestration cannot be deleted
// on its own.
func (p *partition) DeleteInstance(ctx context.Context, instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instance"
	if instance == "" {
		return duroxide.DeleteInstanceResult{}, invalid(op, "empty instance id")
	}
	var a args
	a.flag(force).str(instance)
	return p.deleteScript(ctx, op, scriptDeleteInstance, a)
}

// Deletion totals, the reply of lua/delete_instance.lua and
// lua/delete_instances_atomic.lua, and the tail of
// lua/delete_instance_bulk.lua's (from bulkTotals).
const (
	deletedInstances = iota
	deletedExecutions
	deletedEvents
	deletedMessages
)

// Reply of lua/delete_instance_bulk.lua: counts, then deletion totals.
const (
	bulkTrees = iota
	bulkSkipped
	bulkTotals
)

// deletionTotals reads the deletion totals that start at position from.
func deletionTotals(r *reply, from int) duroxide.DeleteInstanceResult {
	return duroxide.DeleteInstanceResult{
		InstancesDeleted:     uint64(r.int(from + deletedInstances)),
		ExecutionsDeleted:    uint64(r.int(from + deletedExecutions)),
		EventsDeleted:        uint64(r.int(from + deletedEvents)),
		QueueMessagesDeleted: uint64(r.int(from + deletedMessages)),
	}
}

// deleteScript runs a deletion script and reads its totals.
func (p *partition) deleteScript(ctx context.Context, op string, script luaScript, a args) (duroxide.DeleteInstanceResult, error) {
	res, err := p.run(ctx, op, script, a)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	r := newReply(op, res)
	return deletionTotals(r, 0), r.err
}

// DeleteInstanceBulk deletes terminal (Completed or Failed) root instances
// matching the filter, oldest completion first, each with its descendants
// in one atomic step, until Limit roots are deleted. Running roots, and trees
// with a running descendant, are skipped. Roots are read from the index of
// terminal roots a page at a time and deleted bulkBatch per script call.
func (p *partition) DeleteInstanceBulk(ctx context.Context, f duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	return p.deleteBulk(ctx, f, nil)
}

// bulkCross is how a partition of a namespace of several deletes the
// candidate roots whose trees reach other partitions, which its script
// cannot see whole: spans names them among a batch of candidates, del
// deletes one such tree if it is still eligible (deleted false: skipped).
type bulkCross struct {
	spans func(roots []string) (map[string]bool, error)
	del   func(root string) (deleted bool, res duroxide.DeleteInstanceResult, err error)
}

// deleteBulk is DeleteInstanceBulk with the roots cross (nil: none) names
// deleted by it, in their turn.
func (p *partition) deleteBulk(ctx context.Context, f duroxide.InstanceFilter, cross *bulkCross) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instance_bulk"
	var total duroxide.DeleteInstanceResult
	left, err := bulkLimit(op, f)
	if err != nil {
		return total, err
	}
	deleteBatch := func(roots []string) (skipped int, err error) {
		var spans map[string]bool
		if cross != nil {
			if spans, err = cross.spans(roots); err != nil {
				return 0, err
			}
		}
		for len(roots) > 0 && left > 0 {
			if spans[roots[0]] {
				deleted, res, err := cross.del(roots[0])
				addDeletion(&total, res)
				if err != nil {
					return skipped, err
				}
				if deleted {
					left--
				} else {
					skipped++
				}
				roots = roots[1:]
				continue
			}
			n := min(len(roots), bulkBatch)
			if i := slices.IndexFunc(roots[:n], func(r string) bool { return spans[r] }); i >= 0 {
				n = i // the script's batch ends before the next spanning tree
			}
			var a args
			a.at(f.CompletedBefore).int(left).int(n)
			for _, id := range roots[:n] {
				a.str(id)
			}
			res, err := p.run(ctx, op, scriptDeleteInstanceBulk, a)
			if err != nil {
				return skipped, err
			}
			r := newReply(op, res)
			left -= int(r.int(bulkTrees))
			skipped += int(r.int(bulkSkipped))
			addDeletion(&total, deletionTotals(r, bulkTotals))
			if r.err != nil {
				return skipped, r.err
			}
			roots = roots[n:]
		}
		return skipped, nil
	}
	if f.InstanceIDs != nil {
		_, err := deleteBatch(f.InstanceIDs)
		return total, err
	}
	max := "+inf"
	if f.CompletedBefore > 0 {
		max = fmt.Sprintf("(%d", f.CompletedBefore)
	}
	// deleted roots leave the index, skipped ones stay before the next page
	offset := int64(0)
	for left > 0 {
		page, err := p.rdb.ZRangeByScore(ctx, p.keys.Terminal(), &redis.ZRangeBy{Min: "-inf", Max: max, Offset: offset, Count: listPage}).Result()
		if err != nil {
			return total, fail(op, err)
		}
		skipped, err := deleteBatch(page)
		if err != nil || len(page) < listPage {
			return total, err
		}
		offset += int64(skipped)
	}
	return total, nil
}

// bulkLimit is the number of instances a bulk call handles: Limit, or
// DefaultBulkLimit for 0. A negative limit is invalid input.
func bulkLimit(op string, f duroxide.InstanceFilter) (int, error) {
	switch {
	case f.Limit < 0:
		return 0, invalid(op, "negative Limit %d", f.Limit)
	case f.Limit == 0:
		return DefaultBulkLimit, nil
	}
	return f.Limit, nil
}

// checkPrune rejects prune options no execution count can satisfy.
func checkPrune(op string, opts duroxide.PruneOptions) error {
	if opts.KeepLast < 0 {
		return invalid(op, "negative KeepLast %d", opts.KeepLast)
	}
	return nil
}

// PruneExecutions deletes old executions of one instance, atomically; the
// current execution and Running ones are never deleted, the KV store is
// kept. An instance without a record is a not-found error.
func (p *partition) PruneExecutions(ctx context.Context, instance string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	const op = "prune_executions"
	if instance == "" {
		return duroxide.PruneResult{}, invalid(op, "empty instance id")
	}
	if err := checkPrune(op, opts); err != nil {
		return duroxide.PruneResult{}, err
	}
	return p.prune(ctx, op, []string{instance}, opts, 0, true)
}

// PruneExecutionsBulk prunes the instances the filter selects: the listed
// ones (else every instance, oldest first), those whose current execution is
// Completed or Failed and ended before CompletedBefore when it is set, up to
// the limit. Listed ids that do not exist are skipped.
func (p *partition) PruneExecutionsBulk(ctx context.Context, f duroxide.InstanceFilter, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	const op = "prune_executions_bulk"
	if err := checkPrune(op, opts); err != nil {
		return duroxide.PruneResult{}, err
	}
	limit, err := bulkLimit(op, f)
	if err != nil {
		return duroxide.PruneResult{}, err
	}
	ids := f.InstanceIDs
	if ids == nil {
		var err error
		if ids, err = p.listIndex(ctx, op, p.keys.Instances(), false); err != nil {
			return duroxide.PruneResult{}, err
		}
	}
	var total duroxide.PruneResult
	for start := 0; start < len(ids) && total.InstancesProcessed < uint64(limit); start += pruneBatch {
		end := min(start+pruneBatch, len(ids), start+limit-int(total.InstancesProcessed))
		res, err := p.prune(ctx, op, ids[start:end], opts, f.CompletedBefore, false)
		if err != nil {
			return total, err
		}
		total.InstancesProcessed += res.InstancesProcessed
		total.ExecutionsDeleted += res.ExecutionsDeleted
		total.EventsDeleted += res.EventsDeleted
	}
	return total, nil
}

// Reply of lua/prune_executions.lua.
const (
	prunedInstances = iota
	prunedExecutions
	prunedEvents
)

// prune runs one batch of the prune script; mustExist makes an instance
// without a record a not-found error instead of a skipped one.
func (p *partition) prune(ctx context.Context, op string, ids []string, opts duroxide.PruneOptions, instBefore uint64, mustExist bool) (duroxide.PruneResult, error) {
	var a args
	a.int(opts.KeepLast).at(opts.CompletedBefore).at(instBefore).flag(mustExist).int(len(ids))
	for _, id := range ids {
		a.str(id)
	}
	res, err := p.run(ctx, op, scriptPruneExecutions, a)
	if err != nil {
		return duroxide.PruneResult{}, err
	}
	r := newReply(op, res)
	return duroxide.PruneResult{
		InstancesProcessed: uint64(r.int(prunedInstances)),
		ExecutionsDeleted:  uint64(r.int(prunedExecutions)),
		EventsDeleted:      uint64(r.int(prunedEvents)),
	}, r.err
}
