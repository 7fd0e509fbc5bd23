package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// instanceJSON is the --json form of an instance record.
type instanceJSON struct {
	Instance  string  `json:"instance"`
	Name      string  `json:"name"`
	Version   string  `json:"version"`
	Status    string  `json:"status"`
	Execution uint64  `json:"execution"`
	Parent    string  `json:"parent,omitempty"`
	Output    *string `json:"output"`
	CreatedAt *string `json:"created_at"`
	UpdatedAt *string `json:"updated_at"`

	createdMs, updatedMs uint64 // for relative times in tables
}

func toInstanceJSON(i duroxide.InstanceInfo) instanceJSON {
	return instanceJSON{
		Instance: i.InstanceID, Name: i.OrchestrationName, Version: i.OrchestrationVersion,
		Status: i.Status, Execution: i.CurrentExecutionID, Parent: i.ParentInstanceID,
		Output: i.Output, CreatedAt: jsonTime(i.CreatedAt), UpdatedAt: jsonTime(i.UpdatedAt),
		createdMs: i.CreatedAt, updatedMs: i.UpdatedAt,
	}
}

// instanceStatuses are the statuses the provider indexes.
var instanceStatuses = []string{"Running", "Completed", "Failed", "ContinuedAsNew"}

// canonicalStatus accepts a status in any letter case.
func canonicalStatus(s string) (string, bool) {
	for _, st := range instanceStatuses {
		if strings.EqualFold(s, st) {
			return st, true
		}
	}
	return "", false
}

func runInstances(c *cli, args []string) error {
	fs := c.flags("instances")
	status := fs.String("status", "", "only instances with this status: "+strings.Join(instanceStatuses, ", "))
	name := fs.String("name", "", "only instances of this orchestration")
	prefix := fs.String("prefix", "", "only instances whose id starts with this")
	limit := fs.Int("limit", 50, "instances per page")
	cursor := fs.String("cursor", "", "start after this point (the next-page cursor a listing printed)")
	if _, err := c.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *limit < 1 {
		return usageErr("instances", "--limit must be at least 1")
	}
	st, ok := canonicalStatus(*status)
	if *status != "" && !ok {
		return usageErr("instances", "unknown status %q (one of %s)", *status, strings.Join(instanceStatuses, ", "))
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	infos, next, err := s.page(duroxide.InstancePageFilter{Status: st, Orchestration: *name, IDPrefix: *prefix}, *cursor, *limit)
	if err != nil {
		return err
	}
	// A start no runtime could run has no record to list: the first page
	// of an unfiltered-by-status listing shows such starts after it.
	pending := []pendingJSON{}
	if *cursor == "" && st == "" {
		if pending, err = s.pendingStarts(*name, *prefix); err != nil {
			return err
		}
	}
	if c.json {
		out := struct {
			Instances []instanceJSON `json:"instances"`
			Next      string         `json:"next"`
			Pending   []pendingJSON  `json:"pending"`
		}{[]instanceJSON{}, next, pending}
		for _, i := range infos {
			out.Instances = append(out.Instances, toInstanceJSON(i))
		}
		return writeJSON(c.stdout, out)
	}
	if err := c.printInstances(infos, next, *cursor == ""); err != nil {
		return err
	}
	return c.printPendingStarts(pending)
}

// page reads one page of instance records through the provider's
// duroxide.InstanceLister: O(log N + limit) in Redis whatever the size of
// the deployment, where ProviderAdmin's ListInstances returns every id.
// A page may come back short with a next cursor (a name or prefix filter
// examines a bounded number of index entries per call, in every partition):
// the page goes on until it is full, in at most as many calls as there are
// partitions, so the work per page stays bounded.
func (s *session) page(filter duroxide.InstancePageFilter, cursor string, limit int) ([]duroxide.InstanceInfo, string, error) {
	l, ok := s.admin.(duroxide.InstanceLister)
	if !ok {
		return nil, "", duroxide.Permanent("instances", "the provider cannot list instances page by page")
	}
	calls := 1
	if s.prov != nil {
		calls = s.prov.Partitions()
	}
	var infos []duroxide.InstanceInfo
	for ; calls > 0; calls-- {
		page, next, err := l.ListInstancesPage(s.ctx, filter, cursor, limit-len(infos))
		if err != nil {
			return nil, "", err
		}
		infos, cursor = append(infos, page...), next
		if len(infos) >= limit || cursor == "" {
			break
		}
	}
	return infos, cursor, nil
}

// inspect is the body of the commands that read one instance: read it, then
// print it as JSON or with print.
func inspect[T any](c *cli, fs *flag.FlagSet, args []string, read func(*session, string) (T, error), print func(T) error) error {
	pos, s, err := c.parseAndOpen(fs, args, 1, 1)
	if err != nil {
		return err
	}
	defer s.close()
	v, err := read(s, pos[0])
	if err != nil {
		return err
	}
	if c.json {
		return writeJSON(c.stdout, v)
	}
	return print(v)
}

func (c *cli) printInstances(infos []duroxide.InstanceInfo, next string, first bool) error {
	if len(infos) == 0 && next == "" {
		msg := "no instances"
		if !first {
			msg = "no more instances"
		}
		_, err := fmt.Fprintln(c.stdout, msg)
		return err
	}
	now := c.now()
	t := newTable(c.stdout, "INSTANCE", "ORCHESTRATION", "VERSION", "STATUS", "EXEC", "CREATED", "UPDATED")
	for _, i := range infos {
		t.row(i.InstanceID, i.OrchestrationName, i.OrchestrationVersion, i.Status,
			strconv.FormatUint(i.CurrentExecutionID, 10), relTime(msTime(i.CreatedAt), now), relTime(msTime(i.UpdatedAt), now))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if next == "" {
		_, err := fmt.Fprintf(c.stdout, "%d shown, the last page\n", len(infos))
		return err
	}
	_, err := fmt.Fprintf(c.stdout, "%d shown (next page: --cursor %s)\n", len(infos), shellQuote(next))
	return err
}

// shellQuote quotes s for a POSIX shell when it holds more than the
// characters that need none, so a cursor can be pasted back.
func shellQuote(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
