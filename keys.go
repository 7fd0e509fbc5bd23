package dxredis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Keys is the key schema of one namespace. Every key the provider, its Lua
// scripts and its tools touch is built here: the Go methods below and the Lua
// functions of LuaKeyFunctions come from the same family table, so the two
// sides cannot drift apart.
//
// Every key starts with "{namespace}:", so the whole namespace hashes to one
// Redis Cluster slot and every script may touch any key of it.
//
// Variable parts are appended after the family token, separated by ':'. A
// string part that is followed by another string part is written as
// "<byte length>.<text>" so that ids containing ':' can never make two
// different (family, parts) tuples produce the same key.
type Keys struct {
	prefix string
}

// NewKeys returns the key schema of namespace. The namespace must not contain
// '{' or '}' (it is the hash tag); New checks that before calling this.
func NewKeys(namespace string) Keys {
	return Keys{prefix: "{" + namespace + "}:"}
}

// Prefix is the common prefix of every key of the namespace, hash tag
// included. Scripts receive it as KEYS[1] (it routes the call to the
// namespace's slot on Redis Cluster).
func (k Keys) Prefix() string { return k.prefix }

type partKind int

const (
	partString partKind = iota
	partUint
)

// family describes one kind of key. Fixed keys have no parts.
type family struct {
	lua   string // Lua function name: K.<lua>(...)
	token string
	parts []partKind
	doc   string // what the key holds, for README generation and review
}

const (
	str = partString
	num = partUint
)

// families is the single definition of every key of the namespace.
var families = []family{
	// counters and sequences
	{"seq", "seq", nil, "STRING: sequence of orchestrator messages and worker items (enqueue order), and of instance incarnations"},
	{"stats", "stats", nil, "HASH: counters (unlocked queue items, executions, events) read by metrics"},
	{"duenext", "duenext", nil, "STRING: when the due loops run next (ms): the earliest gate, or U.REFRESH after their last run (see U.due)"},
	{"dueowner", "dueowner", nil, "STRING: the id of the due loop that claimed duenext: only it runs then (see U.plan)"},
	{"duebackup", "duebackup", nil, "STRING (expiring): the id of the due loop that runs U.DUE_GRACE after a time another loop claimed, in case that loop died (see U.plan)"},
	{"duewake", "duewake", nil, "ZSET: the due loops' wake-up marker, set when something becomes due before duenext"},
	{"ogate", "ogate", nil, "STRING: lower bound of the earliest score in olocked, odelay and ofut ('n': none), see U.gate"},
	{"wgate", "wgate", nil, "STRING: lower bound of the earliest score in wlocked, wdelay, slive and lwait ('n': none), see U.gate"},
	{"flow", "flow", nil, "HASH: flow settings by name (docs/flow-control.md): 'pa:<activity>' and 'po:<orchestration>' priority (1..10), 'W' the aging window, 'z:<orchestration>' the name paused since ms, 'l:<activity>' marks a limit in lim, 'lo:<orchestration>' the limit on running instances of the name (this partition's share); absent while nothing is set, so filing and fetching check one EXISTS"},
	{"nheld", "nheld", []partKind{str}, "ZSET: instances held because their orchestration name is paused (instance -> held at ms), filed again when the name is resumed"},
	{"orun", "orun", []partKind{str}, "SET: instances of a limited orchestration name holding a running slot (admitted by the limit 'lo:<name>', until they end)"},
	{"oheld", "oheld", []partKind{str}, "ZSET: new instances of a limited orchestration name held until a slot frees (instance -> seq of its start), released oldest first"},
	{"meta", "meta", nil, "HASH: the namespace's layout, fixed at creation (partitions, tags); kept in the namespace's own tag, which is partition 0's only with one partition"},

	// messages between partitions (partitions.go)
	{"obox", "obox", nil, "ZSET: messages a turn sent to instances of other partitions, until relayed (id -> '<id> <partition> <visible at> <#instance> <instance><json>')"},
	{"request", "req", []partKind{str}, "STRING: a client call's request id, once applied (duroxide.CheckedEnqueuer), for RequestIDLifetime"},
	{"rmark", "rmark", nil, "HASH: per source partition, the highest outbox id relayed into this partition (applying an id at or below it again is skipped)"},

	// instances and executions
	{"inst", "i", []partKind{str}, "HASH: instance record (name, version, current execution, parent, custom status, incarnation, paused since ms 'pz', ...)"},
	{"exec", "ex", []partKind{str, num}, "HASH: execution record (status, output, pinned version, times, last event id, bytes)"},
	{"execs", "exs", []partKind{str}, "ZSET: execution ids of an instance"},
	{"history", "h", []partKind{str, num}, "LIST: events of one execution as JSON, oldest first"},

	// orchestrator queue
	{"oq", "oq", []partKind{str}, "ZSET: untagged pending messages of an instance (seq -> visible at)"},
	{"ot", "ot", []partKind{str}, "ZSET, legacy: messages tagged by a lock taken before they moved into om's field tg; read once by its ack, abandon or expiry, then deleted"},
	{"om", "om", []partKind{str}, "HASH: message bodies and attempt counts of an instance, its lock and index state"},
	{"oready", "ordy", []partKind{str}, "ZSET: unlocked instances with visible messages, per pinned version (instance -> order)"},
	{"overs", "overs", nil, "HASH: pinned versions that have a non-empty ready partition"},
	{"odelay", "odly", nil, "ZSET: unlocked instances whose messages are all in the future (instance -> visible at)"},
	{"olocked", "olck", nil, "ZSET: locked instances (instance -> locked until)"},
	{"otoks", "otok", nil, "HASH: orchestrator lock token -> instance"},
	{"ofut", "ofut", nil, "ZSET: orchestrator messages visible only later (seq -> visible at), for queue depths"},
	{"ofilters", "ofilt", nil, "HASH: capability filters of blocked orchestrator fetchers (filter id -> ranges)"},
	{"ofseen", "ofseen", nil, "ZSET: filter id -> last time a fetcher used it"},
	{"owake", "ow", []partKind{str}, "ZSET: wake-up marker for orchestrator fetchers of one filter"},
	{"osticky", "ostk", []partKind{str}, "ZSET: fetchable instances offered to one sticky owner's fetchers first (instance -> order)"},
	{"owait", "oswt", nil, "ZSET: instances offered to their sticky owner alone (instance -> when every fetcher may take them)"},
	{"oswake", "osw", []partKind{str}, "ZSET: wake-up marker for one sticky owner's orchestrator fetchers"},

	// worker queue
	{"witem", "wi", []partKind{num}, "HASH: one worker item (JSON, queue, session, identity, attempts, lock)"},
	{"wtoks", "wtok", nil, "HASH: worker lock token -> item seq"},
	{"wlocked", "wlck", nil, "ZSET: locked worker items (seq -> locked until)"},
	{"wdelay", "wdly", nil, "ZSET: abandoned worker items waiting out a delay (seq -> visible at)"},
	{"wq", "wq", []partKind{str}, "ZSET: ready items without session of one tag queue (seq -> seq)"},
	{"wqueues", "wqs", nil, "SET: tag queues that have held a ready item without session"},
	{"wact", "wa", []partKind{str}, "ZSET: worker items of an instance, members '<execution>:<activity>:<seq>'"},
	{"wwake", "ww", []partKind{str}, "ZSET: wake-up marker for fetchers of one tag queue"},

	// flow control at dispatch (lua/lib_lim.lua, docs/flow-control.md)
	{"lim", "lim", nil, "HASH: limits per activity name (name -> '<concurrency> <rate per s> <burst>', 0: none); on a partitioned namespace each partition holds its share"},
	{"lgq", "lgq", []partKind{str, str}, "ZSET: ready items of one limit group in one tag queue (seq -> its order: the seq shifted by its priority, U.shift); a group is '<#name>:<name>', then '+<limit key>' when the activity has one"},
	{"lgr", "lgr", []partKind{str}, "ZSET: limit groups of one tag queue that may run one more item and have a ready item (group -> order of the first)"},
	{"lrun", "lrun", nil, "HASH: leases held per limit group (group -> locked items)"},
	{"lbkt", "lbkt", []partKind{str}, "STRING: token bucket of one rate-limited group ('<tokens> <at ms>'), expiring when it would be full again, so per-key groups leave nothing behind"},
	{"lwait", "lwait", nil, "ZSET: limit groups out of tokens with a lease free (group -> when the next token is due), under wgate"},

	// sessions
	{"sess", "s", []partKind{str}, "HASH: session record (owner, locked until, last activity, item count, where its queues are indexed)"},
	{"squeue", "sq", []partKind{str, str}, "ZSET: ready items of one session in one tag queue (seq -> seq)"},
	{"sclaim", "sc", []partKind{str}, "ZSET: claimable sessions with ready items in one tag queue (session -> seq of the first)"},
	{"sowned", "so", []partKind{str, str}, "ZSET: one owner's sessions with ready items in one tag queue (session -> seq of the first)"},
	{"sowner", "sown", []partKind{str}, "SET: sessions claimed by one owner"},
	{"slive", "slive", nil, "ZSET: claimed sessions (session -> locked until)"},
	{"sidle", "sidle", nil, "ZSET: sessions whose lock expired (session -> locked until)"},
	{"sorphan", "sorph", nil, "SET: expired sessions without items, removed by CleanupOrphanedSessions"},
	{"cwake", "wc", []partKind{str}, "ZSET: wake-up marker for session-aware fetchers: claimable sessions of one tag queue"},
	{"owned", "wo", []partKind{str, str}, "ZSET: wake-up marker for one owner's sessions of one tag queue"},
	{"wctl", "wx", []partKind{str}, "ZSET: wake-up marker one process's partition blocker blocks on besides its wake keys, set to make it block again on a changed key set"},

	// key-value store
	{"kv", "kv", []partKind{str}, "HASH: KV store of an instance (key -> '<updated ms>:<value>')"},
	{"kvdelta", "kvd", []partKind{str}, "HASH: KV delta of the running execution (key -> '<updated ms>:<value>' or 'x' tombstone)"},

	// management indexes
	{"ilist", "ilist", nil, "ZSET: every instance (instance -> created at)"},
	{"istatus", "ist", []partKind{str}, "ZSET: instances by status of their current execution (instance -> created at)"},
	{"ichildren", "kids", []partKind{str}, "ZSET: children of an instance (child -> created at)"},
	{"iterminal", "iterm", nil, "ZSET: root instances whose current execution is Completed or Failed (instance -> completed at)"},

	// starts that a runtime fetched and handed back (duroxide.PendingStartNoter)
	{"pending", "pend", []partKind{str}, "HASH: why the start of an instance without record did not run (orchestration, version, attempt, max attempts, reason, noted at); removed when the instance is created or deleted"},
	{"ipending", "ipend", nil, "ZSET: instances that have a pending-start note (instance -> noted at)"},

	// schedules (duroxide.ScheduleStore): namespace-wide, in the namespace's own tag
	{"sched", "sch", []partKind{str}, "HASH: a schedule (spec JSON, rev, paused, note, next nominal time or 'end', fire time, the firing in progress (pnom, pkind), the buffered firing, the last started instance, created and updated times)"},
	{"schedall", "scha", nil, "ZSET: every schedule (id -> created at)"},
	{"scheddue", "schd", nil, "ZSET: active schedules with no firing in progress (id -> when the next firing is due; 0: its next time is to be computed)"},
	{"schedpend", "schp", nil, "ZSET: schedules with a claimed firing not yet confirmed (id -> lease expiry; due now: claimable again)"},
	{"schedbuf", "schb", nil, "ZSET: schedules holding a buffered firing (id -> buffered at)"},
	{"schedfires", "schf", []partKind{str}, "ZSET: recent firings of a schedule ('<nominal> <outcome> <at> <instance>' -> nominal time), the newest 100"},
}

// familyByToken indexes families for build.
var familyByToken = func() map[string]family {
	m := make(map[string]family, len(families))
	for _, f := range families {
		m[f.token] = f
	}
	return m
}()

// build assembles a key of the family named by token from its formatted
// parts. A token or part count that does not match the family table is a bug
// in this file, caught by its tests.
func (k Keys) build(token string, parts ...string) string {
	f, ok := familyByToken[token]
	if !ok || len(f.parts) != len(parts) {
		panic("dxredis: key family " + token + " used with wrong parts")
	}
	isString := func(j int) bool { return f.parts[j] == partString }
	var b strings.Builder
	b.WriteString(k.prefix)
	b.WriteString(token)
	for i, p := range parts {
		b.WriteByte(':')
		if needsLength(i, len(parts), isString) {
			b.WriteString(strconv.Itoa(len(p)))
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// needsLength reports whether part i must be length-prefixed: it is a string
// part followed by at least one other string part.
func needsLength(i, n int, isString func(int) bool) bool {
	if !isString(i) {
		return false
	}
	for j := i + 1; j < n; j++ {
		if isString(j) {
			return true
		}
	}
	return false
}

func uid(v uint64) string { return strconv.FormatUint(v, 10) }

// Seq names the sequence that orders messages and worker items and numbers
// instance incarnations (see duroxide.HistoryCursor).
func (k Keys) Seq() string { return k.build("seq") }

// Stats names the counters hash read by metrics and queue depths.
func (k Keys) Stats() string { return k.build("stats") }

// DueNext names when the due loops run next (see lua/move_due.lua).
func (k Keys) DueNext() string { return k.build("duenext") }

// DueOwner names which due loop claimed the time DueNext holds.
func (k Keys) DueOwner() string { return k.build("dueowner") }

// DueBackup names the id of the due loop that runs shortly after a time
// another loop claimed, in case that loop died.
func (k Keys) DueBackup() string { return k.build("duebackup") }

// DueWake names the due loops' wake-up marker, set when something becomes
// due before they would run.
func (k Keys) DueWake() string { return k.build("duewake") }

// PendingStart names the pending-start note of an instance that has no
// record yet (duroxide.PendingStartNoter).
func (k Keys) PendingStart(instance string) string { return k.build("pend", instance) }

// PendingStarts names the index of the instances that have a pending-start
// note, by the time it was written.
func (k Keys) PendingStarts() string { return k.build("ipend") }

// Schedule names the record of a schedule.
func (k Keys) Schedule(id string) string { return k.build("sch", id) }

// SchedulesAll names the index of every schedule by creation time.
func (k Keys) SchedulesAll() string { return k.build("scha") }

// SchedulesDue names the index of active schedules by the time their next
// firing is due: what a scheduler claims from.
func (k Keys) SchedulesDue() string { return k.build("schd") }

// SchedulesPending names the index of claimed, unconfirmed firings by lease
// expiry: an expired one is claimed again (its start is idempotent).
func (k Keys) SchedulesPending() string { return k.build("schp") }

// SchedulesBuffered names the index of schedules holding a buffered firing
// (overlap policy BufferOne).
func (k Keys) SchedulesBuffered() string { return k.build("schb") }

// ScheduleFirings names the recent firings of a schedule.
func (k Keys) ScheduleFirings(id string) string { return k.build("schf", id) }

// Flow names the namespace's flow settings by name: priorities of activity
// and orchestration names, the aging window, paused orchestration names.
func (k Keys) Flow() string { return k.build("flow") }

// NameHeld names the index of the instances held because their
// orchestration name is paused.
func (k Keys) NameHeld(name string) string { return k.build("nheld", name) }

// OrchestrationRunning names the set of instances of orchestration name
// that hold a slot of its limit on running instances.
func (k Keys) OrchestrationRunning(name string) string { return k.build("orun", name) }

// OrchestrationHeld names the index of the new instances of orchestration
// name held by its limit on running instances, oldest start first.
func (k Keys) OrchestrationHeld(name string) string { return k.build("oheld", name) }

// Meta names the namespace's layout record (see NamespaceLayout).
func (k Keys) Meta() string { return k.build("meta") }

// Outbox names the messages turns of this partition sent to other
// partitions, until the relay moved them.
func (k Keys) Outbox() string { return k.build("obox") }

// RelayMarks names the highest outbox id of each source partition already
// applied in this partition.
func (k Keys) RelayMarks() string { return k.build("rmark") }

// Request names the mark of a client call's request id, applied in this
// partition: a repeat of the call finds it and changes nothing.
func (k Keys) Request(id string) string { return k.build("req", id) }

// Family returns the family token of a key of this namespace (the part
// after the prefix, up to its first ':'), "" for a key outside it.
func (k Keys) Family(key string) string {
	rest, ok := strings.CutPrefix(key, k.prefix)
	if !ok {
		return ""
	}
	token, _, _ := strings.Cut(rest, ":")
	return token
}

// OrchGate names the orchestrator queue's maintenance gate: a lower bound of
// the earliest lock expiry or due time, so a fetch reads those sets only
// when something in them may be due.
func (k Keys) OrchGate() string { return k.build("ogate") }

// WorkGate names the worker queue's maintenance gate (see OrchGate), over
// item locks, delayed items and session locks.
func (k Keys) WorkGate() string { return k.build("wgate") }

// Instance names the record of an instance.
func (k Keys) Instance(instance string) string { return k.build("i", instance) }

// Execution names the record of one execution of an instance.
func (k Keys) Execution(instance string, executionID uint64) string {
	return k.build("ex", instance, uid(executionID))
}

// Executions names the set of execution ids of an instance.
func (k Keys) Executions(instance string) string { return k.build("exs", instance) }

// History names the LIST holding the events of one execution as JSON strings,
// oldest first.
func (k Keys) History(instance string, executionID uint64) string {
	return k.build("h", instance, uid(executionID))
}

// OrchPending names the untagged pending messages of an instance.
func (k Keys) OrchPending(instance string) string { return k.build("oq", instance) }

// OrchTagged names the messages tagged by an instance's current lock.
func (k Keys) OrchTagged(instance string) string { return k.build("ot", instance) }

// OrchMessages names the message bodies and lock state of an instance.
func (k Keys) OrchMessages(instance string) string { return k.build("om", instance) }

// OrchReady names the ready partition of one pinned version ("" = unpinned).
func (k Keys) OrchReady(version string) string { return k.build("ordy", version) }

// OrchVersions names the set of pinned versions with ready instances.
func (k Keys) OrchVersions() string { return k.build("overs") }

// OrchDelayed names the index of instances whose messages are all in the future.
func (k Keys) OrchDelayed() string { return k.build("odly") }

// OrchLocked names the index of locked instances by lock expiry.
func (k Keys) OrchLocked() string { return k.build("olck") }

// OrchTokens names the map from orchestrator lock token to instance.
func (k Keys) OrchTokens() string { return k.build("otok") }

// OrchFuture names the index of orchestrator messages visible only later.
func (k Keys) OrchFuture() string { return k.build("ofut") }

// OrchFilters names the registry of capability filters of blocked fetchers.
func (k Keys) OrchFilters() string { return k.build("ofilt") }

// OrchFiltersSeen names the index of filters by last use.
func (k Keys) OrchFiltersSeen() string { return k.build("ofseen") }

// OrchWake names the wake-up key of orchestrator fetchers using one filter.
func (k Keys) OrchWake(filterID string) string { return k.build("ow", filterID) }

// OrchSticky names the fetchable instances offered first to the fetchers of
// one sticky owner (see duroxide.StickyRouter).
func (k Keys) OrchSticky(owner string) string { return k.build("ostk", owner) }

// OrchStickyWait names the index of instances offered to their sticky owner
// alone, by the time every fetcher may take them.
func (k Keys) OrchStickyWait() string { return k.build("oswt") }

// OrchStickyWake names the wake-up key of one sticky owner's orchestrator
// fetchers.
func (k Keys) OrchStickyWake(owner string) string { return k.build("osw", owner) }

// WorkItem names one worker item.
func (k Keys) WorkItem(seq uint64) string { return k.build("wi", uid(seq)) }

// WorkTokens names the map from worker lock token to item seq.
func (k Keys) WorkTokens() string { return k.build("wtok") }

// WorkLocked names the index of locked worker items by lock expiry.
func (k Keys) WorkLocked() string { return k.build("wlck") }

// WorkDelayed names the index of abandoned worker items waiting out a delay.
func (k Keys) WorkDelayed() string { return k.build("wdly") }

// WorkQueue names the ready items without session of one tag queue.
func (k Keys) WorkQueue(queue string) string { return k.build("wq", queue) }

// WorkQueues names the set of tag queues that have held a ready item without
// session: what an any-tag fetch and the queue depths read.
func (k Keys) WorkQueues() string { return k.build("wqs") }

// WorkActivities names the worker items of an instance (for cancellation and
// deletion).
func (k Keys) WorkActivities(instance string) string { return k.build("wa", instance) }

// WorkWake names the wake-up key of fetchers of one tag queue.
func (k Keys) WorkWake(queue string) string { return k.build("ww", queue) }

// Limits names the flow-control limits per activity name
// (docs/flow-control.md).
func (k Keys) Limits() string { return k.build("lim") }

// LimitGroupQueue names the ready items of one limit group in one tag queue.
func (k Keys) LimitGroupQueue(queue, group string) string { return k.build("lgq", queue, group) }

// LimitGroupsReady names the limit groups of one tag queue that may run one
// more item and have one ready.
func (k Keys) LimitGroupsReady(queue string) string { return k.build("lgr", queue) }

// LimitLeases names the count of leases (locked items) per limit group.
func (k Keys) LimitLeases() string { return k.build("lrun") }

// LimitBucket names the token bucket of one rate-limited group.
func (k Keys) LimitBucket(group string) string { return k.build("lbkt", group) }

// LimitWaiting names the limit groups waiting for their next token.
func (k Keys) LimitWaiting() string { return k.build("lwait") }

// Session names a session record.
func (k Keys) Session(session string) string { return k.build("s", session) }

// SessionQueue names the ready items of one session in one tag queue ('*':
// all of them).
func (k Keys) SessionQueue(queue, session string) string { return k.build("sq", queue, session) }

// SessionsClaimable names the claimable sessions with ready items in queue.
func (k Keys) SessionsClaimable(queue string) string { return k.build("sc", queue) }

// SessionsOwned names one owner's sessions with ready items in queue.
func (k Keys) SessionsOwned(queue, owner string) string { return k.build("so", queue, owner) }

// SessionsOfOwner names the set of sessions claimed by owner.
func (k Keys) SessionsOfOwner(owner string) string { return k.build("sown", owner) }

// SessionsLive names the index of claimed sessions by lock expiry.
func (k Keys) SessionsLive() string { return k.build("slive") }

// SessionsIdle names the index of sessions whose lock expired.
func (k Keys) SessionsIdle() string { return k.build("sidle") }

// SessionsOrphaned names the set of expired sessions without items.
func (k Keys) SessionsOrphaned() string { return k.build("sorph") }

// ClaimableWake names the wake-up key of session-aware fetchers for claimable
// sessions of one tag queue.
func (k Keys) ClaimableWake(queue string) string { return k.build("wc", queue) }

// OwnedWake names the wake-up key of one owner's fetchers for its sessions of
// one tag queue.
func (k Keys) OwnedWake(queue, owner string) string { return k.build("wo", queue, owner) }

// WaiterControl names the control marker of one process's blocker of a
// partition (id: its random name): set, it ends the blocking call so that
// it blocks again on the wake keys of pollers that joined meanwhile.
func (k Keys) WaiterControl(id string) string { return k.build("wx", id) }

// KV names the KV store of an instance.
func (k Keys) KV(instance string) string { return k.build("kv", instance) }

// KVDelta names the KV delta of an instance's running execution.
func (k Keys) KVDelta(instance string) string { return k.build("kvd", instance) }

// Instances names the index of every instance by creation time.
func (k Keys) Instances() string { return k.build("ilist") }

// InstancesByStatus names the index of instances whose current execution has
// status.
func (k Keys) InstancesByStatus(status string) string { return k.build("ist", status) }

// Children names the index of an instance's children.
func (k Keys) Children(instance string) string { return k.build("kids", instance) }

// Terminal names the index of terminal root instances by completion time.
func (k Keys) Terminal() string { return k.build("iterm") }

// LuaKeyFunctions returns Lua source defining, for every key family, a
// function K.<name>(parts...) that builds the same key as the Go method. The
// script prelude declares the table K, the local P holding Prefix() and U,
// whose U.id formats integers.
func LuaKeyFunctions() string {
	var b strings.Builder
	for _, f := range families {
		b.WriteString(luaKeyFunction(f))
	}
	return b.String()
}

// luaKeyFunction returns the Lua definition of one family's key function.
func luaKeyFunction(f family) string {
	var b strings.Builder
	args := make([]string, len(f.parts))
	for i := range f.parts {
		args[i] = fmt.Sprintf("a%d", i+1)
	}
	fmt.Fprintf(&b, "function K.%s(%s) return P .. '%s'", f.lua, strings.Join(args, ", "), f.token)
	isString := func(j int) bool { return f.parts[j] == partString }
	for i, kind := range f.parts {
		b.WriteString(" .. ':' .. ")
		switch {
		case kind == partUint:
			fmt.Fprintf(&b, "U.id(a%d)", i+1)
		case needsLength(i, len(f.parts), isString):
			fmt.Fprintf(&b, "#a%d .. '.' .. a%d", i+1, i+1)
		default:
			fmt.Fprintf(&b, "a%d", i+1)
		}
	}
	b.WriteString(" end\n")
	return b.String()
}

// KeyFamily describes one key family of the schema for documentation and
// tests.
type KeyFamily struct {
	Name  string // Lua function name (K.<Name>)
	Token string // the fixed part after the prefix
	Parts int    // number of variable parts
	Doc   string // Redis type and content
}

// KeyFamilies lists every key family, sorted by token.
func KeyFamilies() []KeyFamily {
	out := make([]KeyFamily, 0, len(families))
	for _, f := range families {
		out = append(out, KeyFamily{Name: f.lua, Token: f.token, Parts: len(f.parts), Doc: f.doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Token < out[j].Token })
	return out
}
