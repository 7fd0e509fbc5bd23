package duroxide

import "context"

// Limit is the flow control of one activity or orchestration name. For an
// activity name (Kind ActivityName, or the zero Kind) it bounds dispatch:
// how many of its items may be locked at once, across every process, and
// how fast they may be handed out. For an orchestration name (Kind
// OrchestrationName) it bounds the instances of that name running at once
// (started and not yet Completed or Failed, sub-orchestrations included):
// a start beyond it is accepted and held until a running instance of the
// name ends or is deleted, held starts running oldest first; only
// Concurrency applies. A zero field sets no bound of its kind.
type Limit struct {
	// Kind says whose name Name is. The zero value means ActivityName, so
	// a Limit written before orchestration limits existed keeps its meaning.
	Kind NameKind
	// Name is the activity or orchestration name the limit applies to.
	Name string
	// Concurrency bounds the items of the name locked at once, or the
	// instances of the name running at once (0: none). A lock held by a
	// worker that died counts until it expires.
	Concurrency int
	// RatePerSecond bounds how many items of the name are handed out per
	// second on average (0: none), a token bucket. Activities only.
	RatePerSecond float64
	// Burst is the bucket's size: how many items may be handed out at once
	// after a quiet spell. With a rate it must be at least 1. Activities
	// only.
	Burst int
	// Running and Held are reported by Limits for an orchestration name:
	// the instances holding a slot of the limit, and the new instances
	// waiting for one. SetLimit ignores them.
	Running, Held int
}

// NameKind says whose name a priority or a limit belongs to
// (FlowController). In a Limit the zero value means ActivityName.
type NameKind int

const (
	// ActivityName: the priority of the activities of that name.
	ActivityName NameKind = iota + 1
	// OrchestrationName: the priority of the instances of that
	// orchestration.
	OrchestrationName
)

// String names the kind as the CLI writes it.
func (k NameKind) String() string {
	switch k {
	case ActivityName:
		return "activity"
	case OrchestrationName:
		return "orchestration"
	}
	return "unknown"
}

// MaxPriority is the highest priority; 0, the default, is the lowest.
const MaxPriority = 10

// DefaultAgingWindow is the aging window of a store where none is set.
const DefaultAgingWindow = 1000

// NamePause is the pause state of one orchestration name.
type NamePause struct {
	// SinceMs is when the name was paused (the store's clock, Unix ms).
	SinceMs uint64
	// Held counts the instances of the name held so far. An instance is
	// counted once a message makes it fetchable (or a fetch picks it): one
	// that waits for nothing is not held yet, and is when it next would run.
	Held uint64
}

// FlowSettings are a store's flow settings (FlowController.FlowSettings).
type FlowSettings struct {
	// ActivityPriorities and OrchestrationPriorities map a name to its
	// priority (1..MaxPriority); a name absent has priority 0.
	ActivityPriorities      map[string]int
	OrchestrationPriorities map[string]int
	// AgingWindow is how far one priority step moves work ahead, in the
	// store's enqueue sequence: DefaultAgingWindow unless set.
	AgingWindow uint64
	// PausedNames maps each paused orchestration name to its pause.
	PausedNames map[string]NamePause
}

// FlowController is an optional extension of Provider that keeps flow
// settings by name in the store, so every process that shares the store
// applies the same ones: limits per activity name and on the running
// instances per orchestration name, priorities by activity
// and orchestration name, and pausing an orchestration name. It is one
// interface, not one per feature, because wrappers that pass optional
// interfaces through (extra/dxotel) build one variant per combination.
//
// Limits: a limit bounds dispatch per activity name, or the running
// instances per orchestration name (Limit). An item is bound by
// the limit its name had when it was enqueued. When an activity was
// scheduled with a limit key, the limit of its name applies to each key
// value on its own (a limit per customer, say). A limited item does not
// hold back the items behind it: while its name is at its limit, the fetch
// hands out the next eligible item. A negative or non-finite bound, an
// empty name, or a rate without burst is an ErrInvalidInput error naming
// the operation and the name, and so is a rate or burst on an
// orchestration name. An instance is bound by the limit its name had when it
// started: one running before the limit was set does not count.
//
// Priorities: work of a higher priority is fetched first from its queue,
// in the order it was enqueued within a priority. Each priority step moves
// work AgingWindow places ahead in the store's enqueue sequence (the
// sequence that orders all enqueued work): work of priority p is overtaken
// by at most (q-p)*AgingWindow items of priority q enqueued after it, so
// low priority work is never starved. An activity takes its name's
// priority when it is scheduled and keeps it through retries; an
// orchestration instance takes its name's priority each time a message
// makes it fetchable. Activities of a session keep their session's order.
//
// Pausing an orchestration name holds every instance of it, running ones
// and new starts alike, as InstancePauser holds one instance: messages and
// timers are kept, no turn runs, the status is unchanged; a turn already
// fetched commits. Resuming the name delivers what was held. An instance
// held by its name reports Paused, with NamePaused, in its PauseState.
//
// Every setter reports whether it changed anything. An empty name, a kind
// other than ActivityName or OrchestrationName, or a priority outside
// 0..MaxPriority is an ErrInvalidInput error naming the operation and the
// name.
type FlowController interface {
	// SetLimit sets (or replaces) the limit of l.Name, of l.Kind.
	SetLimit(ctx context.Context, l Limit) error
	// DeleteLimit removes the limit of the activity or orchestration
	// (kind; 0 means ActivityName) called name; true when there was one.
	// Items queued and instances held under it are no longer held back.
	DeleteLimit(ctx context.Context, kind NameKind, name string) (bool, error)
	// Limits lists the limits set, by kind (activities first) and name.
	Limits(ctx context.Context) ([]Limit, error)
	// SetPriority sets the priority of the activities or orchestrations
	// called name; 0 removes it.
	SetPriority(ctx context.Context, kind NameKind, name string, priority int) (bool, error)
	// SetAgingWindow sets the aging window; 0 restores DefaultAgingWindow.
	SetAgingWindow(ctx context.Context, window uint64) (bool, error)
	// PauseOrchestrationName pauses every instance of the orchestration.
	PauseOrchestrationName(ctx context.Context, name string) (bool, error)
	// ResumeOrchestrationName resumes the orchestration's instances.
	ResumeOrchestrationName(ctx context.Context, name string) (bool, error)
	// FlowSettings reads the store's flow settings.
	FlowSettings(ctx context.Context) (FlowSettings, error)
}
