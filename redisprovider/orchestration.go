package redisprovider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// FetchOrchestrationItem locks the instance with the oldest visible message
// among those whose current execution's pinned version the filter accepts
// (nil filter: any; nil pinned version: every non-empty filter) and returns
// its messages, history and KV store. The filter is applied before anything
// is locked or read. (nil, nil) means no work within pollTimeout.
func (p *partition) FetchOrchestrationItem(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.fetchOrchestration(ctx, lockTimeout, pollTimeout, filter, false)
}

// fetchOrchestration is FetchOrchestrationItem and, lazy,
// FetchOrchestrationItemLazy.
func (p *partition) fetchOrchestration(ctx context.Context, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool) (*duroxide.OrchestrationItem, error) {
	const op = "fetch_orchestration_item"
	c, _, err := orchestrationClass(ctx, op, p.lockFor(lockTimeout), lockTimeout, pollTimeout, filter, lazy)
	if err != nil {
		return nil, err
	}
	return fetchOne[duroxide.OrchestrationItem](ctx, p, op, c, pollTimeout)
}

// orchestrationClass validates an orchestration fetch and encodes it, with
// the sticky route of ctx, for lua/fetch_orchestration_item.lua (the token
// is added per call): its class and arguments. lock is the lock duration
// the script takes (lockTimeout, or the provider's default). lazy asks for
// the history's cursor instead of its events.
func orchestrationClass(ctx context.Context, op string, lock, lockTimeout, pollTimeout time.Duration, filter *duroxide.DispatcherCapabilityFilter, lazy bool) (fetchClass, args, error) {
	if err := checkDurations(op, lockTimeout, pollTimeout); err != nil {
		return fetchClass{}, nil, err
	}
	route, err := routeOf(ctx, op)
	if err != nil {
		return fetchClass{}, nil, err
	}
	enc, fid := filterSpec(filter)
	var a args
	a.ms(lock).str(enc).str(fid).flag(lazy).str(route.owner)
	c := fetchClass{id: classID(op, a), empty: enc == ""} // an empty range list accepts nothing
	c.build = func(p *partition) fetchSpec {
		keys := []string{p.keys.OrchWake(fid)}
		if route.owner != "" {
			keys = append(keys, p.keys.OrchStickyWake(route.owner))
		}
		return fetchSpec{keys: keys, queue: queueOrch,
			once: func(ctx context.Context) (any, time.Duration, error) {
				item, due, err := p.fetchOrchestrationOnce(ctx, op, a, lazy)
				return untyped(item), due, err
			},
			giveBack: func(item any) {
				p.giveBack(op, scriptAbandonOrchestrationItem, item.(*duroxide.OrchestrationItem).LockToken)
			},
			op: op, args: a, abandon: scriptAbandonOrchestrationItem,
			decode: func(r *reply) (any, time.Duration, error) {
				item, due, err := p.orchestrationReply(r, nil, lazy)
				return untyped(item), due, err
			}}
	}
	return c, a, nil
}

// Reply of lua/fetch_orchestration_item.lua when it took work (after
// fetchTook).
const (
	orchInstance = fetchTook + 1 + iota
	orchToken
	orchAttempts
	orchName // nil: the instance has no record yet
	orchVersion
	orchExecution
	orchMessages
	orchHistory // lazy: the cursor instead (see cursorLast)
	orchKV
	orchDropped
	orchNow
	orchRerun // nil: more work is eligible
)

// fetchOrchestrationOnce runs the fetch script once (see fetchScript); lazy
// says what a asked for.
func (p *partition) fetchOrchestrationOnce(ctx context.Context, op string, a args, lazy bool) (*duroxide.OrchestrationItem, time.Duration, error) {
	r, _, err := p.fetchScript(ctx, op, scriptFetchOrchestrationItem, scriptAbandonOrchestrationItem, a)
	if r == nil {
		return nil, 0, err
	}
	return p.orchestrationReply(r, err, lazy)
}

// orchestrationReply reads a reply of lua/fetch_orchestration_item.lua: the
// item taken, if any, and when to run the script again. err is the error
// that came with the reply (the caller left after the script ran); the
// orphans the script dropped are logged either way. lazy: the fetch asked
// for the history's cursor.
func (p *partition) orchestrationReply(r *reply, err error, lazy bool) (*duroxide.OrchestrationItem, time.Duration, error) {
	if r.int(fetchTook) == 0 {
		p.logDropped(r.strs(emptyDropped))
		return nil, dueIn(r), r.err
	}
	p.logDropped(r.strs(orchDropped))
	if err != nil {
		return nil, 0, err
	}
	item := p.decodeOrchestrationItem(r, lazy)
	return item, rerunIn(r, orchNow, orchRerun), r.err
}

// dueIn reads an empty fetch reply's time to run again as the time until
// the fetcher must run its script again.
func dueIn(r *reply) time.Duration {
	if d := rerunIn(r, emptyNow, emptyRerun); d >= 0 {
		return d
	}
	return maxBlock
}

// rerunIn reads an optional {now, rerun at} pair: the time until the caller
// must run its script again, or -1 when the reply does not say (more work is
// eligible).
func rerunIn(r *reply, nowAt, dueAt int) time.Duration {
	due, ok := r.optInt(dueAt)
	if !ok {
		return -1
	}
	return max(time.Duration(due-r.int(nowAt))*time.Millisecond, 0)
}

// logDropped reports orphan QueueMessages the fetch deleted.
func (p *partition) logDropped(pairs []string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		p.log.Warn("duroxide-redis: dropped QueueMessages sent to an instance that has not started",
			"instance", pairs[i], "count", pairs[i+1])
	}
}

// decodeOrchestrationItem builds the item from a fetch reply, with the
// history's events or, lazy, its cursor. Undecodable history, cursor or KV
// data becomes HistoryError (the lock is held and the attempt counted, so
// the runtime's poison handling can end the instance); undecodable messages
// are logged and left tagged, so the ack deletes them.
func (p *partition) decodeOrchestrationItem(r *reply, lazy bool) *duroxide.OrchestrationItem {
	inst, _ := r.str(orchInstance)
	token, _ := r.str(orchToken)
	item := &duroxide.OrchestrationItem{
		Instance:     inst,
		LockToken:    token,
		AttemptCount: uint32(r.int(orchAttempts)),
	}
	for i, raw := range r.strs(orchMessages) {
		m, err := duroxide.UnmarshalWorkItem([]byte(raw))
		if err != nil {
			p.log.Error("duroxide-redis: skipping an undecodable orchestrator message; the ack deletes it",
				"instance", inst, "position", i, "error", err)
			continue
		}
		item.Messages = append(item.Messages, m)
	}
	name, hasRecord := r.str(orchName)
	item.OrchestrationName = name
	item.Version, _ = r.str(orchVersion)
	item.ExecutionID = duroxide.InitialExecutionID
	if cur, ok := r.str(orchExecution); ok {
		item.ExecutionID, _ = strconv.ParseUint(cur, 10, 64)
	}
	var first []duroxide.Event // the execution's first event, when read
	if lazy {
		item.Cursor, first, item.HistoryError = decodeCursor(r.strs(orchHistory), item.ExecutionID)
	} else {
		item.History, item.HistoryError = decodeHistory(r.strs(orchHistory), item.ExecutionID)
		first = item.History
	}
	item.KVSnapshot, item.HistoryError = decodeKV(r.strs(orchKV), item.HistoryError)
	if !hasRecord {
		describeNewInstance(item, first)
	}
	if item.Cursor != nil {
		item.Cursor.ExecutionID = item.ExecutionID
	}
	return item
}

// describeNewInstance fills name, version and execution of an instance that
// has no record yet from its StartOrchestration message or, for history
// written without a turn, from its OrchestrationStarted event, the first of
// history (the events read: all, one or none).
func describeNewInstance(item *duroxide.OrchestrationItem, history []duroxide.Event) {
	for _, m := range item.Messages {
		if s, ok := as[duroxide.StartOrchestration](m); ok {
			item.OrchestrationName = s.Orchestration
			item.Version = ""
			if s.Version != nil {
				item.Version = *s.Version
			}
			if s.ExecutionID != 0 {
				item.ExecutionID = s.ExecutionID
			}
			return
		}
	}
	if len(history) > 0 {
		if s, ok := history[0].Kind.(duroxide.OrchestrationStartedEvent); ok {
			item.OrchestrationName, item.Version = s.Name, s.Version
		}
	}
}

// decodeHistory decodes stored events; on the first failure it returns no
// events and a description of the failure.
func decodeHistory(raw []string, executionID uint64) ([]duroxide.Event, string) {
	events := make([]duroxide.Event, len(raw))
	for i, e := range raw {
		if err := events[i].UnmarshalJSON([]byte(e)); err != nil {
			return nil, fmt.Sprintf("history of execution %d, event at position %d: %v", executionID, i, err)
		}
	}
	return events, ""
}

// decodeKV parses the KV store entries ('<updated ms>:<value>') of a fetch.
func decodeKV(raw []string, historyErr string) (map[string]duroxide.KVEntry, string) {
	if len(raw) == 0 {
		return nil, historyErr
	}
	out := make(map[string]duroxide.KVEntry, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		e, err := parseKVEntry(raw[i+1])
		if err != nil {
			if historyErr == "" {
				historyErr = fmt.Sprintf("KV store entry %q: %v", raw[i], err)
			}
			return nil, historyErr
		}
		out[raw[i]] = e
	}
	return out, historyErr
}

// parseKVEntry splits a stored KV entry into value and update time.
func parseKVEntry(s string) (duroxide.KVEntry, error) {
	ts, value, ok := strings.Cut(s, ":")
	if !ok {
		return duroxide.KVEntry{}, fmt.Errorf("corrupt entry")
	}
	ms, err := strconv.ParseUint(ts, 10, 64)
	if err != nil {
		return duroxide.KVEntry{}, fmt.Errorf("corrupt timestamp: %w", err)
	}
	return duroxide.KVEntry{Value: value, LastUpdatedAtMs: ms}, nil
}
