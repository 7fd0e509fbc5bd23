package redisprovider

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
)

// Read-only views of what the queues hold while instances run, for
// operators' tools (the dashboard): nothing a runtime needs. They read
// only what the queues keep anyway; the provider keeps no register of
// runtimes or workers for them.

// maxActivityItems caps the items InstanceActivity returns: an instance
// with more activities in flight than this is shown by their count.
const maxActivityItems = 500

// maxSessionLeases caps the sessions Runtimes returns per partition.
const maxSessionLeases = 200

// ActivityItem is what the worker queue holds of one scheduled activity
// that is not acked yet.
type ActivityItem struct {
	ExecutionID uint64
	ActivityID  uint64 // the event id of its ActivityScheduled
	// State is "ready" (waiting for a worker), "delayed" (abandoned with a
	// delay, waiting it out) or "locked" (a worker runs it).
	State string
	// Attempts counts the fetches the item has had: the attempt a locked
	// item is on, the attempts a ready or delayed one has used.
	Attempts int
	// LockedUntil is when a locked item's lock expires (ms since the
	// epoch, Redis clock), 0 otherwise.
	LockedUntil uint64
	Tag         string // its worker tag, "" for the default queue
	Session     string // its session, "" for none
	// SessionOwner is the worker owner holding the session now ("" when
	// none does): the only worker identity the queue keeps. A plain item's
	// lock is a nonce of the fetcher's, which names no worker.
	SessionOwner string
}

// InstanceActivity is what the queues hold of one instance's work in
// progress.
type InstanceActivity struct {
	Now uint64 // Redis time of the read, ms since the epoch
	// Items are its activity items, at most maxActivityItems of them, in
	// (execution, activity) order; Total counts them all.
	Items []ActivityItem
	Total int
	// TurnLockedUntil is when the lock of the runtime running a turn of
	// the instance expires, 0 when no turn runs.
	TurnLockedUntil uint64
	// StickyOwner is the runtime its last turn ran on while the instance
	// stays sticky to it (duroxide.StickyRouter), "" otherwise.
	StickyOwner string
}

// InstanceActivity reads what the worker and orchestrator queues hold of
// instance's work in progress, in one script of O(items); an unknown
// instance has none.
func (p *partition) InstanceActivity(ctx context.Context, instance string) (InstanceActivity, error) {
	const op = "get_instance_activities"
	if instance == "" {
		return InstanceActivity{}, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance).int(maxActivityItems)
	res, err := p.run(ctx, op, scriptGetInstanceActivities, a)
	if err != nil {
		return InstanceActivity{}, err
	}
	r := newReply(op, res)
	ia := InstanceActivity{Now: uint64(r.int(0)), Total: int(r.int(1))}
	turn, _ := r.str(2)
	ia.TurnLockedUntil = parseMs(turn)
	ia.StickyOwner, _ = r.str(3)
	f := r.list(4)
	states := map[string]string{"r": "ready", "d": "delayed", "l": "locked"}
	const width = 8
	for i := 0; i+width <= len(f); i += width {
		it := ActivityItem{ExecutionID: parseMs(f[i]), ActivityID: parseMs(f[i+1]), State: states[f[i+2]],
			Attempts: int(parseMs(f[i+3])), LockedUntil: parseMs(f[i+4]), Session: f[i+6], SessionOwner: f[i+7]}
		it.Tag, _ = strings.CutPrefix(f[i+5], "t:")
		if f[i+5] == "d" {
			it.Tag = ""
		}
		ia.Items = append(ia.Items, it)
	}
	return ia, r.err
}

// FetcherFilter is the capability filter of orchestrator fetchers that
// blocked waiting for work: one entry for all the fetchers with the same
// filter, whichever runtime they are in.
type FetcherFilter struct {
	// Versions are the duroxide versions the fetchers take: "any", or
	// ranges "lo..hi" (either end may be open) joined by ", ".
	Versions string
	// LastSeen is when one of them last registered it (ms since the
	// epoch). Fetchers refresh it at most every minute and the provider
	// forgets it ten minutes after the last.
	LastSeen uint64
}

// SessionLease is a session a worker owner holds.
type SessionLease struct {
	Session, Owner string
	LockedUntil    uint64 // ms since the epoch
}

// Runtimes is what the queues know of the runtimes serving a namespace.
type Runtimes struct {
	Now uint64 // Redis time of the read (the latest of the partitions')
	// Filters are the orchestrator fetchers' capability filters.
	Filters []FetcherFilter
	// Sessions are the sessions held now, latest expiry first (at most
	// maxSessionLeases per partition); ClaimedSessions counts them all.
	Sessions        []SessionLease
	ClaimedSessions int
	// LockedTurns and LockedActivities count the instances a runtime runs
	// a turn of and the activity items a worker holds, now.
	LockedTurns, LockedActivities int
}

// Runtimes reads what the queues know of the runtimes serving the
// namespace, in one script of O(filters + sessions returned).
func (p *partition) Runtimes(ctx context.Context) (Runtimes, error) {
	const op = "get_runtimes"
	var a args
	a.int(maxSessionLeases)
	res, err := p.run(ctx, op, scriptGetRuntimes, a)
	if err != nil {
		return Runtimes{}, err
	}
	r := newReply(op, res)
	rt := Runtimes{Now: uint64(r.int(0)), LockedTurns: int(r.int(1)), LockedActivities: int(r.int(2)), ClaimedSessions: int(r.int(5))}
	f := r.list(3)
	for i := 0; i+2 <= len(f); i += 2 {
		rt.Filters = append(rt.Filters, FetcherFilter{Versions: filterText(f[i]), LastSeen: parseMs(f[i+1])})
	}
	s := r.list(4)
	for i := 0; i+3 <= len(s); i += 3 {
		rt.Sessions = append(rt.Sessions, SessionLease{Session: s[i], Owner: s[i+1], LockedUntil: parseMs(s[i+2])})
	}
	return rt, r.err
}

// filterText shows a filter as filterSpec encodes it ('*' any, ” none,
// else 'lo,hi;lo,hi').
func filterText(enc string) string {
	switch enc {
	case "*":
		return "any"
	case "":
		return "none"
	}
	ranges := strings.Split(enc, ";")
	for i, rg := range ranges {
		lo, hi, _ := strings.Cut(rg, ",")
		ranges[i] = lo + ".." + hi
	}
	return strings.Join(ranges, ", ")
}

// list returns element i, an array of strings and integers, as strings; a
// nil element is an empty array (an empty Lua table).
func (r *reply) list(i int) []string {
	v := r.at(i)
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		r.setErr(i)
		return nil
	}
	out := make([]string, len(arr))
	for j, e := range arr {
		switch e := e.(type) {
		case string:
			out[j] = e
		case int64:
			out[j] = strconv.FormatInt(e, 10)
		default:
			r.setErr(i)
			return nil
		}
	}
	return out
}

// parseMs reads a decimal count (” and anything else as 0).
func parseMs(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// InstanceActivity reads the instance's partition.
func (pp *Provider) InstanceActivity(ctx context.Context, instance string) (InstanceActivity, error) {
	if instance == "" {
		return InstanceActivity{}, invalid("get_instance_activities", "empty instance id")
	}
	return pp.of(instance).InstanceActivity(ctx, instance)
}

// Runtimes merges every partition's: a runtime fetches from each, so a
// filter is listed once, at its latest sighting.
func (pp *Provider) Runtimes(ctx context.Context) (Runtimes, error) {
	each, err := eachPart(pp, func(p *partition) (Runtimes, error) { return p.Runtimes(ctx) })
	if err != nil {
		return Runtimes{}, err
	}
	var all Runtimes
	seen := map[string]int{}
	for _, r := range each {
		all.Now = max(all.Now, r.Now)
		all.LockedTurns += r.LockedTurns
		all.LockedActivities += r.LockedActivities
		all.ClaimedSessions += r.ClaimedSessions
		all.Sessions = append(all.Sessions, r.Sessions...)
		for _, f := range r.Filters {
			if i, ok := seen[f.Versions]; ok {
				all.Filters[i].LastSeen = max(all.Filters[i].LastSeen, f.LastSeen)
				continue
			}
			seen[f.Versions] = len(all.Filters)
			all.Filters = append(all.Filters, f)
		}
	}
	slices.SortStableFunc(all.Sessions, func(a, b SessionLease) int { return cmp.Compare(b.LockedUntil, a.LockedUntil) })
	return all, nil
}
