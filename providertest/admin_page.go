package providertest

import (
	"errors"
	"slices"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The cases of the optional duroxide.InstanceLister, in the Admin/Discovery
// section: each skips when the provider's admin does not implement it.

// lister returns the admin's InstanceLister, or skips the case.
func lister(e *env) duroxide.InstanceLister {
	e.t.Helper()
	l, ok := adm(e).(duroxide.InstanceLister)
	if !ok {
		e.t.Skip("the provider's admin does not implement duroxide.InstanceLister")
	}
	return l
}

// admPages walks every page of filter, limit records each, and returns the
// ids in order; no page may be larger than limit, and the walk must end.
func admPages(e *env, filter duroxide.InstancePageFilter, limit int) []string {
	e.t.Helper()
	var ids []string
	cursor := ""
	for range 1000 {
		page, next, err := lister(e).ListInstancesPage(e.ctx, filter, cursor, limit)
		if err != nil {
			e.t.Fatalf("ListInstancesPage(%+v, %q, %d): %v", filter, cursor, limit, err)
		}
		if len(page) > limit {
			e.t.Fatalf("ListInstancesPage returned %d records, limit %d", len(page), limit)
		}
		for _, info := range page {
			ids = append(ids, info.InstanceID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
	e.t.Fatalf("ListInstancesPage(%+v) never ended", filter)
	return nil
}

// admPageWalk proves pages of any size together are ListInstances (newest
// first, each instance once), with the records GetInstanceInfo returns.
func admPageWalk(e *env) {
	lister(e)
	if got := admPages(e, duroxide.InstancePageFilter{}, 3); len(got) != 0 {
		e.t.Fatalf("empty store: pages hold %q", got)
	}
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		kvStart(e, id)
	}
	kvStart(e, "h").complete()
	all := admList(e)
	for _, limit := range []int{1, 3, 8, 100} {
		if got := admPages(e, duroxide.InstancePageFilter{}, limit); !slices.Equal(got, all) {
			e.t.Fatalf("pages of %d = %q, want ListInstances' %q", limit, got, all)
		}
	}
	page, next, err := lister(e).ListInstancesPage(e.ctx, duroxide.InstancePageFilter{}, "", 8)
	if err != nil || len(page) != 8 || next != "" {
		e.t.Fatalf("one page of all 8: %d records, next %q, error %v; want 8, \"\", nil", len(page), next, err)
	}
	for _, info := range page {
		want, err := adm(e).GetInstanceInfo(e.ctx, info.InstanceID)
		if err != nil {
			e.t.Fatal(err)
		}
		if info.InstanceID != want.InstanceID || info.Status != want.Status || info.OrchestrationName != want.OrchestrationName ||
			info.CreatedAt != want.CreatedAt || info.CurrentExecutionID != want.CurrentExecutionID {
			e.t.Fatalf("page record %+v, GetInstanceInfo %+v", info, want)
		}
	}
}

// admPageFilters proves the status, name and id-prefix filters, alone and
// together, keep exactly the matching instances in ListInstances' order.
func admPageFilters(e *env) {
	lister(e)
	kvStart(e, "order-1").complete()
	kvStart(e, "order-2")
	kvStartNamed(e, "order-3", "", "Ship")
	kvStartNamed(e, "refund-1", "", "Ship").complete()
	kvStart(e, "refund-2").fail()
	keep := func(match func(string) bool) []string {
		var out []string
		for _, id := range admList(e) {
			if match(id) {
				out = append(out, id)
			}
		}
		return out
	}
	cases := []struct {
		filter duroxide.InstancePageFilter
		want   []string
	}{
		{duroxide.InstancePageFilter{Status: "Completed"}, keep(func(id string) bool { return id == "order-1" || id == "refund-1" })},
		{duroxide.InstancePageFilter{Status: "Failed"}, []string{"refund-2"}},
		{duroxide.InstancePageFilter{Orchestration: "Ship"}, keep(func(id string) bool { return id == "order-3" || id == "refund-1" })},
		{duroxide.InstancePageFilter{IDPrefix: "order-"}, keep(func(id string) bool { return id[:6] == "order-" })},
		{duroxide.InstancePageFilter{Status: "Running", Orchestration: "Orch", IDPrefix: "order"}, []string{"order-2"}},
		{duroxide.InstancePageFilter{IDPrefix: "nothing"}, nil},
	}
	for _, c := range cases {
		for _, limit := range []int{1, 10} {
			if got := admPages(e, c.filter, limit); !slices.Equal(got, c.want) {
				e.t.Errorf("pages of %d for %+v = %q, want %q", limit, c.filter, got, c.want)
			}
		}
	}
}

// admPageDeletedCursor proves a cursor stays usable when its instance is
// deleted: the next page starts after it, without repeating or skipping.
func admPageDeletedCursor(e *env) {
	lister(e)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		kvStart(e, id).complete()
	}
	all := admList(e)
	page, next, err := lister(e).ListInstancesPage(e.ctx, duroxide.InstancePageFilter{}, "", 2)
	if err != nil || len(page) != 2 || next == "" {
		e.t.Fatalf("first page: %d records, next %q, error %v", len(page), next, err)
	}
	if _, err := adm(e).DeleteInstance(e.ctx, page[1].InstanceID, false); err != nil {
		e.t.Fatal(err)
	}
	rest, _, err := lister(e).ListInstancesPage(e.ctx, duroxide.InstancePageFilter{}, next, 10)
	if err != nil {
		e.t.Fatal(err)
	}
	var got []string
	for _, info := range rest {
		got = append(got, info.InstanceID)
	}
	if !slices.Equal(got, all[2:]) {
		e.t.Fatalf("after deleting the cursor's instance %s: %q, want %q", page[1].InstanceID, got, all[2:])
	}
}

// admPageInvalid proves bad arguments are ErrInvalidInput errors.
func admPageInvalid(e *env) {
	l := lister(e)
	for _, c := range []struct {
		what   string
		filter duroxide.InstancePageFilter
		cursor string
		limit  int
	}{
		{"limit 0", duroxide.InstancePageFilter{}, "", 0},
		{"unknown status", duroxide.InstancePageFilter{Status: "Sleeping"}, "", 10},
		{"malformed cursor", duroxide.InstancePageFilter{}, "not a cursor", 10},
	} {
		if _, _, err := l.ListInstancesPage(e.ctx, c.filter, c.cursor, c.limit); !errors.Is(err, duroxide.ErrInvalidInput) {
			e.t.Errorf("%s: error %v, want ErrInvalidInput", c.what, err)
		}
	}
}
