package main

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
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
	Total     int    // instances in the index read (before the name and prefix filters)
}

// instanceLister pages through instances. The dashboard reads pages only
// through it, so a provider-side paged listing can replace indexLister
// without touching the page.
type instanceLister interface {
	List(ctx context.Context, f instanceFilter, cursor string, limit int) (instancePage, error)
}

// indexScanBound is how many index entries one page may read while
// filtering by name or prefix, so a filter that matches little never reads
// the whole index in one request; the page then offers to read on.
const indexScanBound = 1000

// indexLister pages through the provider's instance indexes (by status
// when filtered by status) newest first, as the instances command does,
// and filters names and prefixes on the records read. Its cursor is an
// offset into the index.
type indexLister struct{ s *session }

func (l indexLister) List(ctx context.Context, f instanceFilter, cursor string, limit int) (instancePage, error) {
	offset := 0
	if cursor != "" {
		var err error
		if offset, err = strconv.Atoi(cursor); err != nil || offset < 0 {
			return instancePage{}, usageErr("instances", "bad page cursor %q", cursor)
		}
	}
	s := l.s.withContext(ctx)
	chunk := limit
	if f.Name != "" || f.Prefix != "" {
		chunk = max(limit, 100) // most records read will not match
	}
	var p instancePage
	for scanned := 0; len(p.Instances) < limit && scanned < indexScanBound; {
		ids, total, err := s.pageIDs(f.Status, offset, min(chunk, indexScanBound-scanned))
		if err != nil {
			return p, err
		}
		p.Total = total
		if len(ids) == 0 {
			return p, nil
		}
		infos, err := s.infos(ids)
		if err != nil {
			return p, err
		}
		// infos skips deleted instances but keeps the index's order
		at := 0
		for _, info := range infos {
			for ids[at] != info.InstanceID {
				at++
			}
			if f.matches(info) {
				p.Instances = append(p.Instances, info)
				if len(p.Instances) == limit {
					break
				}
			}
		}
		used := len(ids)
		if len(p.Instances) == limit {
			used = at + 1
		}
		offset += used
		scanned += used
	}
	if offset < p.Total {
		p.Next = strconv.Itoa(offset)
	}
	return p, nil
}

func (f instanceFilter) matches(i duroxide.InstanceInfo) bool {
	return (f.Name == "" || i.OrchestrationName == f.Name) && strings.HasPrefix(i.InstanceID, f.Prefix)
}

// instancesPageSize is how many instances the page shows at once.
const instancesPageSize = 25

// instancesData is the instances page.
type instancesData struct {
	Filter   instanceFilter
	Statuses []string
	Page     instancePage
	NextURL  string
}

func (u *uiServer) instances(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := instanceFilter{Name: strings.TrimSpace(q.Get("name")), Prefix: strings.TrimSpace(q.Get("prefix"))}
	if st := q.Get("status"); st != "" {
		var ok bool
		if f.Status, ok = canonicalStatus(st); !ok {
			u.fail(w, r, usageErr("instances", "unknown status %q (one of %s)", st, strings.Join(instanceStatuses, ", ")))
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), u.c.timeout)
	defer cancel()
	p, err := u.lister.List(ctx, f, q.Get("cursor"), instancesPageSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	d := instancesData{Filter: f, Statuses: instanceStatuses, Page: p}
	if p.Next != "" {
		next := url.Values{"status": {f.Status}, "name": {f.Name}, "prefix": {f.Prefix}, "cursor": {p.Next}}
		d.NextURL = "/instances?" + next.Encode()
	}
	u.render(w, r, http.StatusOK, "instances", "Instances", d)
}
