package engine

import "github.com/duroxide-go/duroxide-redis/duroxide"

// Divergence is where a replay parted from the history it was fed: the
// stored event the engine was applying when it failed the turn as
// nondeterministic, and the code's action it compared that event with.
type Divergence struct {
	Event duroxide.Event
	// Action describes the code's action compared with Event, "" when the
	// code had emitted none there (it returned, or waits on something
	// else).
	Action string
}

func newDivergence(ev duroxide.Event, compared *action) *Divergence {
	d := &Divergence{Event: ev}
	if compared != nil {
		d.Action = compared.describe()
	}
	return d
}

// CheckAll makes the engine's replay apply every stored event even after
// the code has returned, so history the code no longer produces fails the
// turn as nondeterministic. The replayer sets it; a runtime turn stops
// applying history where the code returns (its history cannot hold more).
func (e *Engine) CheckAll() { e.checkAll = true }

// Divergence is where the last turn's replay found the code
// nondeterministic, tied to a stored event; nil when it did not, or when
// the failure belongs to no single event (a cancellation mismatch found at
// the end of the replay).
func (e *Engine) Divergence() *Divergence { return e.diverged }

// IsTerminal reports the events that end an execution: completed, failed,
// continued as new.
func IsTerminal(k duroxide.EventKind) bool { return isTerminalKind(k) }

// Describe renders an event kind as the engine's nondeterminism messages
// do: its type and fields.
func Describe(k duroxide.EventKind) string { return describeKind(k) }
