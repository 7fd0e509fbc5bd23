package redisprovider

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// pruneBatch is how many instances one prune script call handles.
const pruneBatch = 100

// DeleteInstancesAtomic deletes the given instances and everything stored
// for them in one script, all or nothing. Without force it refuses when one
// of them is Running; it always refuses when a child of one of them is not
// in the list. Only instances that existed are counted.
func (p *Provider) DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instances_atomic"
	var a args
	a.flag(force).int(len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id == "" {
			return duroxide.DeleteInstanceResult{}, invalid(op, "empty instance id")
		}
		if !seen[id] {
			seen[id] = true
			a.str(id)
		}
	}
	a[1] = fmt.Sprint(len(seen))
	if len(seen) == 0 {
		return duroxide.DeleteInstanceResult{}, nil
	}
	res, err := p.run(ctx, op, "delete_instances", a)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	r := newReply(op, res)
	return duroxide.DeleteInstanceResult{
		InstancesDeleted:     uint64(r.int(0)),
		ExecutionsDeleted:    uint64(r.int(1)),
		EventsDeleted:        uint64(r.int(2)),
		QueueMessagesDeleted: uint64(r.int(3)),
	}, r.err
}

// DeleteInstance deletes a root instance with all its descendants. A
// sub-orchestration cannot be deleted on its own.
func (p *Provider) DeleteInstance(ctx context.Context, instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instance"
	parent, err := p.GetParentID(ctx, instance)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	if parent != "" {
		return duroxide.DeleteInstanceResult{}, duroxide.Permanent(op,
			"instance "+instance+" is a sub-orchestration of "+parent+": delete the root instance instead")
	}
	tree, err := p.GetInstanceTree(ctx, instance)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	return p.DeleteInstancesAtomic(ctx, tree.AllIDs, force)
}

// DeleteInstanceBulk deletes terminal (Completed or Failed) root instances
// matching the filter, oldest completion first, each with its descendants
// in one atomic step, until Limit roots are deleted. Running roots, and trees
// with a running descendant, are skipped.
func (p *Provider) DeleteInstanceBulk(ctx context.Context, f duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	const op = "delete_instance_bulk"
	var total duroxide.DeleteInstanceResult
	left := bulkLimit(f)
	err := p.eachTerminalRoot(ctx, op, f, func(root string) (deleted bool, err error) {
		tree, err := p.GetInstanceTree(ctx, root)
		if err != nil {
			return false, err
		}
		res, err := p.DeleteInstancesAtomic(ctx, tree.AllIDs, false)
		if err != nil {
			if duroxide.IsRetryable(err) {
				return false, err
			}
			return false, nil // a descendant runs, or the tree grew: not eligible now
		}
		left--
		total.InstancesDeleted += res.InstancesDeleted
		total.ExecutionsDeleted += res.ExecutionsDeleted
		total.EventsDeleted += res.EventsDeleted
		total.QueueMessagesDeleted += res.QueueMessagesDeleted
		return true, nil
	}, func() bool { return left > 0 })
	return total, err
}

// eachTerminalRoot calls fn with the terminal roots matching the filter,
// oldest completion first, while more() holds. Roots come from the index of
// terminal roots a page at a time; an allow-list is checked id by id. fn
// reports whether it deleted the root (so it left the index).
func (p *Provider) eachTerminalRoot(ctx context.Context, op string, f duroxide.InstanceFilter, fn func(string) (bool, error), more func() bool) error {
	key := p.keys.Terminal()
	if f.InstanceIDs != nil {
		for _, id := range f.InstanceIDs {
			if !more() {
				return nil
			}
			score, err := p.rdb.ZScore(ctx, key, id).Result()
			if isRedisNil(err) || (err == nil && f.CompletedBefore > 0 && score >= float64(f.CompletedBefore)) {
				continue
			}
			if err != nil {
				return p.fail(op, err)
			}
			if _, err := fn(id); err != nil {
				return err
			}
		}
		return nil
	}
	max := "+inf"
	if f.CompletedBefore > 0 {
		max = fmt.Sprintf("(%d", f.CompletedBefore)
	}
	// deleted roots leave the index, skipped ones stay before the next page
	skipped := int64(0)
	for more() {
		page, err := p.rdb.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-inf", Max: max, Offset: skipped, Count: listPage}).Result()
		if err != nil {
			return p.fail(op, err)
		}
		for _, id := range page {
			if !more() {
				return nil
			}
			deleted, err := fn(id)
			if err != nil {
				return err
			}
			if !deleted {
				skipped++
			}
		}
		if len(page) < listPage {
			return nil
		}
	}
	return nil
}

func bulkLimit(f duroxide.InstanceFilter) int {
	if f.Limit <= 0 {
		return DefaultBulkLimit
	}
	return f.Limit
}

// PruneExecutions deletes old executions of one instance, atomically; the
// current execution and Running ones are never deleted, the KV store is
// kept.
func (p *Provider) PruneExecutions(ctx context.Context, instance string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	const op = "prune_executions"
	if instance == "" {
		return duroxide.PruneResult{}, invalid(op, "empty instance id")
	}
	return p.prune(ctx, op, []string{instance}, opts, 0)
}

// PruneExecutionsBulk prunes the instances the filter selects: the listed
// ones (else every instance, oldest first), those whose current execution is
// Completed or Failed and ended before CompletedBefore when it is set, up to
// the limit.
func (p *Provider) PruneExecutionsBulk(ctx context.Context, f duroxide.InstanceFilter, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	const op = "prune_executions_bulk"
	ids := f.InstanceIDs
	if ids == nil {
		var err error
		if ids, err = p.listIndex(ctx, op, p.keys.Instances(), false); err != nil {
			return duroxide.PruneResult{}, err
		}
	}
	var total duroxide.PruneResult
	limit := uint64(bulkLimit(f))
	for start := 0; start < len(ids) && total.InstancesProcessed < limit; start += pruneBatch {
		end := min(start+pruneBatch, len(ids), start+int(limit-total.InstancesProcessed))
		res, err := p.prune(ctx, op, ids[start:end], opts, f.CompletedBefore)
		if err != nil {
			return total, err
		}
		total.InstancesProcessed += res.InstancesProcessed
		total.ExecutionsDeleted += res.ExecutionsDeleted
		total.EventsDeleted += res.EventsDeleted
	}
	return total, nil
}

func (p *Provider) prune(ctx context.Context, op string, ids []string, opts duroxide.PruneOptions, instBefore uint64) (duroxide.PruneResult, error) {
	if opts.KeepLast < 0 {
		return duroxide.PruneResult{}, invalid(op, "negative KeepLast")
	}
	var a args
	a.int(opts.KeepLast).at(opts.CompletedBefore).at(instBefore).int(len(ids))
	for _, id := range ids {
		a.str(id)
	}
	res, err := p.run(ctx, op, "prune_executions", a)
	if err != nil {
		return duroxide.PruneResult{}, err
	}
	r := newReply(op, res)
	return duroxide.PruneResult{
		InstancesProcessed: uint64(r.int(0)),
		ExecutionsDeleted:  uint64(r.int(1)),
		EventsDeleted:      uint64(r.int(2)),
	}, r.err
}

func isRedisNil(err error) bool { return errors.Is(err, redis.Nil) }
