package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instanceFilter narrows the instances page; empty fields match anything.
type instanceFilter struct {
	Status string // one of instanceStatuses
	Name   string // orchestration name, exactly
	Prefix string // instance id prefix
}

// instancePage is one page of matching instances, newest first.
type instancePage struct {
	Instances []duroxide.InstanceInfo
	Next      string // cursor of the next page; "" at the end
}

// instanceLister pages through instances; the page reads them only
// through it.
type instanceLister interface {
	List(ctx context.Context, f instanceFilter, cursor string, limit int) (instancePage, error)
}

// providerLister pages with the provider's duroxide.InstanceLister, which
// costs O(log n + page) in Redis (name and prefix filters examine a bounded
// number of index entries per call and may return a short page with a
// cursor to read on).
type providerLister struct{ s *session }

func (l providerLister) List(ctx context.Context, f instanceFilter, cursor string, limit int) (instancePage, error) {
	infos, next, err := l.s.withContext(ctx).page(duroxide.InstancePageFilter{Status: f.Status, Orchestration: f.Name, IDPrefix: f.Prefix}, cursor, limit)
	return instancePage{Instances: infos, Next: next}, err
}

// instancesPageSize is how many instances the page shows at once.
const instancesPageSize = 25

// instancesData is the instances page.
type instancesData struct {
	Filter instanceFilter
	// Status is the status filter as chosen: Filter's, or Cancelled, which
	// the page reads as the Failed instances that were cancelled
	Status   string
	Statuses []string
	Page     instancePage
	Rows     []instanceRow // the page's instances, with what the list shows of them
	NextURL  string
	// Pending are the starts no runtime that fetched them could run: they
	// have no record to list, so the first page shows them apart.
	Pending []pendingJSON
}

func (u *uiServer) instances(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := instanceFilter{Name: strings.TrimSpace(q.Get("name")), Prefix: strings.TrimSpace(q.Get("prefix"))}
	statuses := append(slices.Clone(instanceStatuses), "Cancelled")
	shown := ""
	if st := q.Get("status"); strings.EqualFold(st, "Cancelled") {
		// duroxide stores a cancellation as Failed: the page keeps those
		f.Status, shown = "Failed", "Cancelled"
	} else if st != "" {
		var ok bool
		if f.Status, ok = canonicalStatus(st); !ok {
			u.fail(w, r, usageErr("instances", "unknown status %q (one of %s)", st, strings.Join(statuses, ", ")))
			return
		}
		shown = f.Status
	}
	ctx, cancel := context.WithTimeout(r.Context(), u.c.timeout)
	defer cancel()
	p, err := u.lister.List(ctx, f, q.Get("cursor"), instancesPageSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d := instancesData{Filter: f, Status: shown, Statuses: statuses, Page: p}
	s := u.s.withContext(ctx)
	for _, info := range p.Instances {
		row, err := listRow(s, info)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		if shown == "Cancelled" && row.Shown != "Cancelled" {
			continue
		}
		d.Rows = append(d.Rows, row)
	}
	if q.Get("cursor") == "" && f.Status == "" {
		if d.Pending, err = s.pendingStarts(f.Name, f.Prefix); err != nil {
			u.fail(w, r, err)
			return
		}
	}
	if p.Next != "" {
		next := url.Values{"status": {shown}, "name": {f.Name}, "prefix": {f.Prefix}, "cursor": {p.Next}}
		d.NextURL = "/instances?" + next.Encode()
	}
	u.render(w, r, http.StatusOK, "instances", "Instances", d)
}

// instanceRow is one instance of the list.
type instanceRow struct {
	duroxide.InstanceInfo
	// Shown is the status the list shows: Cancelled for an instance that
	// failed because it was cancelled.
	Shown string
	// Reason is a failed instance's failure message (its stored output).
	Reason string
	// CustomStatus is the instance's custom status, "" when it has none.
	CustomStatus string
	// Paused: a running instance is paused.
	Paused bool
}

// cancelledPrefix starts duroxide's message of a cancellation failure
// (AppErrorKind Cancelled), which is what a failed execution's output
// stores; the instance page reads the failure event itself.
const cancelledPrefix = "canceled: "

// listRow adds to a listed record its failure, custom status and, for a
// running instance, whether it is paused: one more read per row, of the
// custom status. The pause flag comes with the record (InstanceInfo.Pause,
// read by the listing's script); a record without it (a provider that does
// not report it) costs a read of the pause state.
func listRow(s *session, info duroxide.InstanceInfo) (instanceRow, error) {
	row := instanceRow{InstanceInfo: info, Shown: info.Status}
	if info.Status == "Failed" && info.Output != nil {
		row.Reason = *info.Output
		if strings.HasPrefix(row.Reason, cancelledPrefix) {
			row.Shown = "Cancelled"
		}
	}
	cs, err := s.prov.GetCustomStatus(s.ctx, info.InstanceID, 0)
	if err != nil {
		return row, err
	}
	if cs != nil && cs.Status != nil {
		row.CustomStatus = *cs.Status
	}
	if info.Status == "Running" {
		ps, err := s.pauseState(info)
		if err != nil && !errors.Is(err, duroxide.ErrNotFound) { // deleted since listed
			return row, err
		}
		row.Paused = ps.Paused
	}
	return row, nil
}
