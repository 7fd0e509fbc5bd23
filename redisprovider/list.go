package redisprovider

import (
	"context"
	"regexp"
	"slices"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Bounds of one ListInstancesPage call, so no call runs long in Redis:
// at most maxPageLimit records, and for the filters without an index (name,
// id prefix) at most pageScanFactor index entries per record asked for,
// never fewer than minPageScan.
const (
	maxPageLimit   = 1000
	pageScanFactor = 10
	minPageScan    = 1000
)

// pageStatuses are the statuses the provider indexes.
var pageStatuses = []string{"Running", "Completed", "Failed", "ContinuedAsNew"}

// pageCursor is the form of list_instances_page's cursors.
var pageCursor = regexp.MustCompile(`^[0-9]+:.+$`)

var _ duroxide.InstanceLister = (*partition)(nil)

// ListInstancesPage implements duroxide.InstanceLister: one page of the
// instance index (the status index when filter.Status is set), newest
// first, in one script call of O(log n + entries examined). Name and id
// prefix filters have no index; a call examines at most
// max(10 × limit, 1000) entries and may return a short page with a cursor.
func (p *partition) ListInstancesPage(ctx context.Context, filter duroxide.InstancePageFilter, cursor string, limit int) ([]duroxide.InstanceInfo, string, error) {
	const op = "list_instances_page"
	if limit < 1 {
		return nil, "", invalid(op, "limit must be at least 1")
	}
	if filter.Status != "" && !slices.Contains(pageStatuses, filter.Status) {
		return nil, "", invalid(op, "unknown status %q", filter.Status)
	}
	if cursor != "" && !pageCursor.MatchString(cursor) {
		return nil, "", invalid(op, "malformed cursor %q", cursor)
	}
	limit = min(limit, maxPageLimit)
	var a args
	a.str(filter.Status).str(filter.Orchestration).str(filter.IDPrefix).str(cursor).int(limit).int(max(pageScanFactor*limit, minPageScan))
	res, err := p.run(ctx, op, scriptListInstancesPage, a)
	if err != nil {
		return nil, "", err
	}
	r := newReply(op, res)
	next, _ := r.str(0)
	pairs, ok := r.at(1).([]any)
	if r.err != nil {
		return nil, "", r.err
	}
	if !ok || len(pairs)%2 != 0 {
		return nil, "", undecodable(op, "unexpected script reply")
	}
	page := make([]duroxide.InstanceInfo, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		id, _ := pairs[i].(string)
		info, err := decodeInfo(op, id, pairs[i+1])
		if err != nil {
			return nil, "", err
		}
		page = append(page, info)
	}
	return page, next, nil
}
