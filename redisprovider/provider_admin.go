package redisprovider

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Provider's management calls: the instance-scoped ones go to the
// instance's partition, the namespace-wide ones read or write every
// partition.

// ListInstances returns every instance id, newest first (as Provider's):
// the partitions' indexes merged by creation time.
func (pp *Provider) ListInstances(ctx context.Context) ([]string, error) {
	return pp.listMerged(ctx, "list_instances", func(p *partition) string { return p.keys.Instances() })
}

// ListInstancesByStatus returns the instances whose current execution has
// status, newest first across partitions.
func (pp *Provider) ListInstancesByStatus(ctx context.Context, status string) ([]string, error) {
	return pp.listMerged(ctx, "list_instances_by_status", func(p *partition) string { return p.keys.InstancesByStatus(status) })
}

// listMerged reads the instance index key names in every partition and
// merges the entries newest first, ties as one index orders them.
func (pp *Provider) listMerged(ctx context.Context, op string, key func(p *partition) string) ([]string, error) {
	lists, err := eachPart(pp, func(p *partition) ([]redis.Z, error) { return p.listScored(ctx, op, key(p)) })
	if err != nil {
		return nil, err
	}
	var all []pagePos
	for _, zs := range lists {
		for _, z := range zs {
			id, _ := z.Member.(string)
			all = append(all, pagePos{at: uint64(z.Score), id: id})
		}
	}
	slices.SortFunc(all, comparePos)
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.id
	}
	return out, nil
}

// eachPart runs read on every partition at once (each is its own slot, on
// its own shard in a Cluster, so the reads cost one round trip, not one
// per partition) and returns the results in partition order, or the first
// partition's error.
func eachPart[T any](pp *Provider, read func(p *partition) (T, error)) ([]T, error) {
	return concurrently(len(pp.parts), len(pp.parts), func(k int) (T, error) { return read(pp.parts[k]) })
}

// concurrently runs f(0..n-1), at most limit at a time, and returns the
// results in order, or the first error in that order.
func concurrently[T any](n, limit int, f func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, n)
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i], errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pagePos is a place in an instance index's order: newest first (creation
// time in ms), ties by id descending, as ZREVRANGE orders them. A
// partition's ListInstancesPage cursor is one ("<at>:<id>"), and any of
// them is a valid cursor in every partition: list_instances_page starts
// after the place, whether or not its instance is in that partition.
type pagePos struct {
	at uint64
	id string
}

// comparePos orders places newest first.
func comparePos(a, b pagePos) int {
	if c := cmp.Compare(b.at, a.at); c != 0 {
		return c
	}
	return strings.Compare(b.id, a.id)
}

func (q pagePos) String() string { return strconv.FormatUint(q.at, 10) + ":" + q.id }

// parsePos reads a cursor list_instances_page returned.
func parsePos(cursor string) (pagePos, error) {
	at, id, _ := strings.Cut(cursor, ":")
	n, err := strconv.ParseUint(at, 10, 64)
	if err != nil || id == "" {
		return pagePos{}, undecodable("list_instances_page", "unexpected cursor %q", cursor)
	}
	return pagePos{at: n, id: id}, nil
}

// ListChildren returns an instance's children, which a child with an
// explicit id may have put in another partition.
func (pp *Provider) ListChildren(ctx context.Context, instance string) ([]string, error) {
	if len(pp.parts) == 1 || instance == "" {
		return pp.parts[0].ListChildren(ctx, instance)
	}
	kids, err := pp.childrenOf(ctx, []string{instance})
	if err != nil {
		return nil, err
	}
	return kids[0], nil
}

// ListExecutions returns an instance's execution ids.
func (pp *Provider) ListExecutions(ctx context.Context, instance string) ([]uint64, error) {
	return pp.of(instance).ListExecutions(ctx, instance)
}

// ReadHistoryWithExecutionID returns one execution's history.
func (pp *Provider) ReadHistoryWithExecutionID(ctx context.Context, instance string, executionID uint64) ([]duroxide.Event, error) {
	return pp.of(instance).ReadHistoryWithExecutionID(ctx, instance, executionID)
}

// ReadHistory returns the current execution's history.
func (pp *Provider) ReadHistory(ctx context.Context, instance string) ([]duroxide.Event, error) {
	return pp.of(instance).ReadHistory(ctx, instance)
}

// LatestExecutionID returns an instance's current execution id.
func (pp *Provider) LatestExecutionID(ctx context.Context, instance string) (uint64, error) {
	return pp.of(instance).LatestExecutionID(ctx, instance)
}

// GetInstanceInfo returns an instance's record.
func (pp *Provider) GetInstanceInfo(ctx context.Context, instance string) (duroxide.InstanceInfo, error) {
	return pp.of(instance).GetInstanceInfo(ctx, instance)
}

// GetExecutionInfo returns one execution's record.
func (pp *Provider) GetExecutionInfo(ctx context.Context, instance string, executionID uint64) (duroxide.ExecutionInfo, error) {
	return pp.of(instance).GetExecutionInfo(ctx, instance, executionID)
}

// GetParentID returns an instance's parent.
func (pp *Provider) GetParentID(ctx context.Context, instance string) (string, error) {
	return pp.of(instance).GetParentID(ctx, instance)
}

// PruneExecutions prunes an instance's old executions.
func (pp *Provider) PruneExecutions(ctx context.Context, instance string, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	return pp.of(instance).PruneExecutions(ctx, instance, opts)
}

// PruneExecutionsBulk prunes in every partition (Limit applies to each).
func (pp *Provider) PruneExecutionsBulk(ctx context.Context, f duroxide.InstanceFilter, opts duroxide.PruneOptions) (duroxide.PruneResult, error) {
	var total duroxide.PruneResult
	for _, p := range pp.parts {
		r, err := p.PruneExecutionsBulk(ctx, f, opts)
		total.InstancesProcessed += r.InstancesProcessed
		total.ExecutionsDeleted += r.ExecutionsDeleted
		total.EventsDeleted += r.EventsDeleted
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// GetSystemMetrics adds up every partition's counters.
func (pp *Provider) GetSystemMetrics(ctx context.Context) (duroxide.SystemMetrics, error) {
	each, err := eachPart(pp, func(p *partition) (duroxide.SystemMetrics, error) { return p.GetSystemMetrics(ctx) })
	var total duroxide.SystemMetrics
	if err != nil {
		return total, err
	}
	for _, m := range each {
		total = AddMetrics(total, m)
	}
	return total, nil
}

// GetQueueDepths adds up every partition's queue depths.
func (pp *Provider) GetQueueDepths(ctx context.Context) (duroxide.QueueDepths, error) {
	each, err := eachPart(pp, func(p *partition) (duroxide.QueueDepths, error) { return p.GetQueueDepths(ctx) })
	var total duroxide.QueueDepths
	if err != nil {
		return total, err
	}
	for _, d := range each {
		total = AddQueueDepths(total, d)
	}
	return total, nil
}

// AddMetrics adds two partitions' counters: what GetSystemMetrics reports
// for a namespace, for tools that read each partition and want the total
// without reading them again.
func AddMetrics(a, b duroxide.SystemMetrics) duroxide.SystemMetrics {
	a.TotalInstances += b.TotalInstances
	a.TotalExecutions += b.TotalExecutions
	a.RunningInstances += b.RunningInstances
	a.CompletedInstances += b.CompletedInstances
	a.FailedInstances += b.FailedInstances
	a.TotalEvents += b.TotalEvents
	return a
}

// AddQueueDepths adds two partitions' queue depths (see AddMetrics).
func AddQueueDepths(a, b duroxide.QueueDepths) duroxide.QueueDepths {
	a.OrchestratorQueue += b.OrchestratorQueue
	a.WorkerQueue += b.WorkerQueue
	a.TimerQueue += b.TimerQueue
	return a
}

// GetInstanceTree returns an instance and its descendants, breadth first,
// the root first, whatever partitions they live in.
func (pp *Provider) GetInstanceTree(ctx context.Context, instance string) (duroxide.InstanceTree, error) {
	tree, err := pp.of(instance).GetInstanceTree(ctx, instance)
	if err != nil || len(pp.parts) == 1 {
		return tree, err
	}
	all, err := pp.trees(ctx, []string{instance})
	if err != nil {
		return duroxide.InstanceTree{}, err
	}
	return duroxide.InstanceTree{RootID: instance, AllIDs: all[instance]}, nil
}

// DeleteInstance deletes a root instance with its descendants. A tree in
// one partition goes in one script; a tree whose explicitly named children
// live in other partitions is deleted partition by partition, the root's
// last, each partition's part atomically (without force, none is deleted
// when one of them is running).
func (pp *Provider) DeleteInstance(ctx context.Context, instance string, force bool) (duroxide.DeleteInstanceResult, error) {
	home := pp.PartitionOf(instance)
	if len(pp.parts) == 1 || instance == "" {
		return pp.parts[home].DeleteInstance(ctx, instance, force)
	}
	tree, err := pp.GetInstanceTree(ctx, instance)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	groups := pp.group(tree.AllIDs)
	if len(groups) == 1 {
		return pp.parts[home].DeleteInstance(ctx, instance, force)
	}
	if parent, err := pp.GetParentID(ctx, instance); err == nil && parent != "" {
		return pp.parts[home].DeleteInstance(ctx, instance, force) // refused: not a root
	}
	if err := pp.checkDeletion(ctx, "delete_instance", tree.AllIDs, force); err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	return pp.deleteGroups(ctx, groups, home, force)
}

// checkDeletion refuses, before a deletion that spans partitions deletes
// anything, what each partition's script would refuse for its part: without
// force a Running instance, and always a child of a listed instance that is
// not listed (the scripts see only the children in their own partition).
func (pp *Provider) checkDeletion(ctx context.Context, op string, ids []string, force bool) error {
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	kids, err := pp.childrenOf(ctx, ids)
	if err != nil {
		return err
	}
	running := make([]bool, len(ids))
	if !force {
		if running, err = pp.running(ctx, ids); err != nil {
			return err
		}
	}
	for i, id := range ids {
		if running[i] {
			return duroxide.Errorf(op, duroxide.ErrConflict, "instance %s is Running; delete it with force or wait until it ends; nothing was deleted", id)
		}
		for _, k := range kids[i] {
			if !listed[k] {
				return duroxide.Errorf(op, duroxide.ErrConflict, "child %s of instance %s is not in the list; nothing was deleted", k, id)
			}
		}
	}
	return nil
}

// running reports which of ids are Running, reading their records
// concurrently, so their round trips overlap (with Options.AutoPipeline they
// go in one batch per node). An id without a record is not running.
func (pp *Provider) running(ctx context.Context, ids []string) ([]bool, error) {
	return concurrently(len(ids), maxConcurrentReads, func(i int) (bool, error) {
		info, err := pp.GetInstanceInfo(ctx, ids[i])
		if errors.Is(err, duroxide.ErrNotFound) {
			return false, nil
		}
		return err == nil && info.Status == "Running", err
	})
}

// maxConcurrentReads bounds the reads running starts at once: enough to
// fill a pipeline batch, few enough that a tree of thousands does not start
// thousands of goroutines.
const maxConcurrentReads = 64

// DeleteInstancesAtomic deletes the given instances, atomically within each
// partition, the partitions in id order.
func (pp *Provider) DeleteInstancesAtomic(ctx context.Context, ids []string, force bool) (duroxide.DeleteInstanceResult, error) {
	if len(pp.parts) == 1 || slices.Contains(ids, "") {
		return pp.parts[0].DeleteInstancesAtomic(ctx, ids, force)
	}
	// checked even when the ids share a partition: a listed instance's
	// child with an explicit id may live in another one, where that
	// partition's script cannot see it
	if err := pp.checkDeletion(ctx, "delete_instances_atomic", ids, force); err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	return pp.deleteGroups(ctx, pp.group(ids), -1, force)
}

// group splits ids by partition.
func (pp *Provider) group(ids []string) map[int][]string {
	g := make(map[int][]string)
	for _, id := range ids {
		k := pp.PartitionOf(id)
		g[k] = append(g[k], id)
	}
	return g
}

// deleteGroups deletes each partition's group atomically, the partition
// last (-1: none) last, so an interrupted deletion leaves the root to be
// deleted again.
func (pp *Provider) deleteGroups(ctx context.Context, groups map[int][]string, last int, force bool) (duroxide.DeleteInstanceResult, error) {
	var total duroxide.DeleteInstanceResult
	order := make([]int, 0, len(groups))
	for k := range groups {
		if k != last {
			order = append(order, k)
		}
	}
	slices.Sort(order)
	if _, ok := groups[last]; ok {
		order = append(order, last)
	}
	for _, k := range order {
		r, err := pp.parts[k].DeleteInstancesAtomic(ctx, groups[k], force)
		addDeletion(&total, r)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func addDeletion(total *duroxide.DeleteInstanceResult, r duroxide.DeleteInstanceResult) {
	total.InstancesDeleted += r.InstancesDeleted
	total.ExecutionsDeleted += r.ExecutionsDeleted
	total.EventsDeleted += r.EventsDeleted
	total.QueueMessagesDeleted += r.QueueMessagesDeleted
}

// DeleteInstanceBulk deletes terminal root instances in every partition, at
// most f.Limit roots in all (each partition's deletions count against what
// is left), each partition's oldest completion first. A tree within one
// partition goes in its script, as Provider deletes it; a tree with
// children (explicit ids) in other partitions, which that script cannot
// see, is checked across partitions and deleted as DeleteInstance deletes
// it, or skipped when it still runs.
func (pp *Provider) DeleteInstanceBulk(ctx context.Context, f duroxide.InstanceFilter) (duroxide.DeleteInstanceResult, error) {
	if len(pp.parts) == 1 {
		return pp.parts[0].DeleteInstanceBulk(ctx, f)
	}
	left, err := bulkLimit("delete_instance_bulk", f)
	if err != nil {
		return duroxide.DeleteInstanceResult{}, err
	}
	groups := pp.group(f.InstanceIDs)
	var total duroxide.DeleteInstanceResult
	for k, p := range pp.parts {
		if left <= 0 {
			break
		}
		pf := f
		pf.Limit = left
		if f.InstanceIDs != nil {
			if pf.InstanceIDs = groups[k]; len(pf.InstanceIDs) == 0 {
				continue
			}
		}
		r, err := p.deleteBulk(ctx, pf, pp.bulkCross(ctx, k, f.CompletedBefore))
		addDeletion(&total, r)
		if err != nil {
			return total, err
		}
		left -= int(r.InstancesDeleted)
	}
	return total, nil
}

// bulkCross deletes, for partition k's bulk deletion, the trees that reach
// other partitions (see bulkCross).
func (pp *Provider) bulkCross(ctx context.Context, k int, before uint64) *bulkCross {
	const op = "delete_instance_bulk"
	var trees map[string][]string
	home := pp.parts[k]
	return &bulkCross{
		spans: func(roots []string) (map[string]bool, error) {
			var err error
			if trees, err = pp.trees(ctx, roots); err != nil {
				return nil, err
			}
			out := make(map[string]bool)
			for _, r := range roots {
				out[r] = slices.ContainsFunc(trees[r], func(id string) bool { return pp.PartitionOf(id) != k })
			}
			return out, nil
		},
		del: func(root string) (bool, duroxide.DeleteInstanceResult, error) {
			// still a terminal root, completed in time (the script's test)
			done, err := home.rdb.ZScore(ctx, home.keys.Terminal(), root).Result()
			if errors.Is(err, redis.Nil) || (err == nil && before > 0 && done >= float64(before)) {
				return false, duroxide.DeleteInstanceResult{}, nil
			}
			if err != nil {
				return false, duroxide.DeleteInstanceResult{}, fail(op, err)
			}
			ids := trees[root]
			if err := pp.checkDeletion(ctx, op, ids, false); errors.Is(err, duroxide.ErrConflict) {
				return false, duroxide.DeleteInstanceResult{}, nil // a Running instance in the tree
			} else if err != nil {
				return false, duroxide.DeleteInstanceResult{}, err
			}
			res, err := pp.deleteGroups(ctx, pp.group(ids), k, false)
			return err == nil, res, err
		},
	}
}

// trees returns the ids of each root's tree, breadth first, the root first,
// following children into every partition a level at a time (one pipeline
// per level).
func (pp *Provider) trees(ctx context.Context, roots []string) (map[string][]string, error) {
	out := make(map[string][]string, len(roots))
	rootOf := make(map[string]string, len(roots))
	for _, r := range roots {
		out[r], rootOf[r] = []string{r}, r
	}
	for level := roots; len(level) > 0; {
		kids, err := pp.childrenOf(ctx, level)
		if err != nil {
			return nil, err
		}
		var next []string
		for i, id := range level {
			for _, c := range kids[i] {
				if _, seen := rootOf[c]; !seen {
					r := rootOf[id]
					rootOf[c], out[r] = r, append(out[r], c)
					next = append(next, c)
				}
			}
		}
		level = next
	}
	return out, nil
}

// childrenOf reads the children of each of ids in every partition, in one
// pipeline: kids[i] are ids[i]'s.
func (pp *Provider) childrenOf(ctx context.Context, ids []string) ([][]string, error) {
	cmds := make([]*redis.StringSliceCmd, 0, len(ids)*len(pp.parts))
	_, err := pp.base.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, id := range ids {
			for _, p := range pp.parts {
				cmds = append(cmds, pipe.ZRange(ctx, p.keys.Children(id), 0, -1))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fail("list_children", err)
	}
	kids := make([][]string, len(ids))
	for i, c := range cmds {
		kids[i/len(pp.parts)] = append(kids[i/len(pp.parts)], c.Val()...)
	}
	return kids, nil
}

// ListInstancesPage lists one page of instances newest first across
// partitions, with Provider's cursors. Every partition lists a page from
// the cursor; a partition that stopped early (its page full, or its scan
// bound reached) was read down to its next cursor only, so of the merged
// records only those up to the newest such cursor are sure to be complete:
// the page is the first limit of them, and the next cursor is the last
// record returned, or that newest partition cursor when fewer remain.
func (pp *Provider) ListInstancesPage(ctx context.Context, filter duroxide.InstancePageFilter, cursor string, limit int) ([]duroxide.InstanceInfo, string, error) {
	if len(pp.parts) == 1 {
		return pp.parts[0].ListInstancesPage(ctx, filter, cursor, limit)
	}
	type page struct {
		recs []duroxide.InstanceInfo
		next string
	}
	each, err := eachPart(pp, func(p *partition) (page, error) {
		recs, next, err := p.ListInstancesPage(ctx, filter, cursor, limit)
		return page{recs, next}, err
	})
	if err != nil {
		return nil, "", err
	}
	pages := make([][]duroxide.InstanceInfo, len(each))
	nexts := make([]string, len(each))
	for k, pg := range each {
		pages[k], nexts[k] = pg.recs, pg.next
	}
	return mergePages(pages, nexts, min(limit, maxPageLimit))
}

// mergePages merges the pages the partitions listed from one cursor (page
// k, with its next cursor nexts[k]) into a page of at most limit records
// and its next cursor (see Provider.ListInstancesPage).
func mergePages(pages [][]duroxide.InstanceInfo, nexts []string, limit int) ([]duroxide.InstanceInfo, string, error) {
	var recs []duroxide.InstanceInfo
	var frontier *pagePos // the newest next cursor of a partition
	for k, page := range pages {
		recs = append(recs, page...)
		if nexts[k] == "" {
			continue
		}
		q, err := parsePos(nexts[k])
		if err != nil {
			return nil, "", err
		}
		if frontier == nil || comparePos(q, *frontier) < 0 {
			frontier = &q
		}
	}
	posOf := func(info duroxide.InstanceInfo) pagePos { return pagePos{at: info.CreatedAt, id: info.InstanceID} }
	slices.SortFunc(recs, func(a, b duroxide.InstanceInfo) int { return comparePos(posOf(a), posOf(b)) })
	if frontier != nil {
		recs = slices.DeleteFunc(recs, func(info duroxide.InstanceInfo) bool { return comparePos(posOf(info), *frontier) > 0 })
	}
	switch {
	case len(recs) > limit:
		recs = recs[:limit]
		return recs, posOf(recs[limit-1]).String(), nil
	case frontier != nil:
		return recs, frontier.String(), nil
	}
	return recs, "", nil
}
