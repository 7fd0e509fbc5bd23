package main

import (
	"errors"
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
	limit := fs.Int("limit", 50, "instances per page")
	offset := fs.Int("offset", 0, "skip this many instances (the next page starts at offset+limit)")
	if _, err := c.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *limit < 1 || *offset < 0 {
		return usageErr("instances", "--limit must be at least 1 and --offset not negative")
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
	page, total, err := s.pageIDs(st, *offset, *limit)
	if err != nil {
		return err
	}
	infos, err := s.infos(page)
	if err != nil {
		return err
	}
	if c.json {
		out := struct {
			Total     int            `json:"total"`
			Offset    int            `json:"offset"`
			Limit     int            `json:"limit"`
			Instances []instanceJSON `json:"instances"`
		}{total, *offset, *limit, []instanceJSON{}}
		for _, i := range infos {
			out.Instances = append(out.Instances, toInstanceJSON(i))
		}
		return writeJSON(c.stdout, out)
	}
	return c.printInstances(infos, *offset, *limit, total)
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

// pageIDs reads one page of the instance index (newest first), of the
// status index when status is set, and the index's size. ProviderAdmin only
// lists whole indexes, which at a million instances would mean a million ids
// per page shown; the provider's public key names let a page cost
// O(log N + limit) instead.
func (s *session) pageIDs(status string, offset, limit int) ([]string, int, error) {
	key := s.prov.Keys().Instances()
	if status != "" {
		key = s.prov.Keys().InstancesByStatus(status)
	}
	pipe := s.rdb.Pipeline()
	ids := pipe.ZRevRange(s.ctx, key, int64(offset), int64(offset+limit-1))
	total := pipe.ZCard(s.ctx, key)
	if _, err := pipe.Exec(s.ctx); err != nil {
		return nil, 0, redisError("list_instances_page", err)
	}
	return ids.Val(), int(total.Val()), nil
}

// infos reads the records of ids, skipping instances deleted since the
// index was read.
func (s *session) infos(ids []string) ([]duroxide.InstanceInfo, error) {
	out := make([]duroxide.InstanceInfo, 0, len(ids))
	for _, id := range ids {
		info, err := s.instanceInfo("instances", id)
		if errors.Is(err, duroxide.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func (c *cli) printInstances(infos []duroxide.InstanceInfo, offset, limit, total int) error {
	if total == 0 {
		_, err := fmt.Fprintln(c.stdout, "no instances")
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
	if len(infos) == 0 {
		_, err := fmt.Fprintf(c.stdout, "no instances at offset %d of %d\n", offset, total)
		return err
	}
	next := ""
	if offset+limit < total {
		next = fmt.Sprintf(" (next page: --offset %d)", offset+limit)
	}
	_, err := fmt.Fprintf(c.stdout, "%d-%d of %d%s\n", offset+1, offset+len(infos), total, next)
	return err
}
