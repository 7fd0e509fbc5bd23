package duroxide

import "context"

// PauseState is the pause state of one instance (InstancePauser).
type PauseState struct {
	// Paused: the instance is held; no turn of it runs until it is resumed
	// (and its orchestration name, if NamePaused).
	Paused bool
	// SinceMs is when it was paused (the store's clock, Unix ms); 0 when
	// not paused. When only its name is paused, the name's pause time.
	SinceMs uint64
	// NamePaused: the instance's orchestration name is paused
	// (FlowController.PauseOrchestrationName), which holds it whether or
	// not the instance itself is; resuming the instance alone does not
	// release it then.
	NamePaused bool
	// Held counts the messages waiting for the instance's next turn (timers
	// not yet due included), paused or not.
	Held uint64
}

// InstancePauser is an optional extension of Provider that pauses and
// resumes instances. A paused instance is held: messages sent to it (raised
// events, activity and timer completions, sub-orchestration results) are
// stored but no fetch hands it out; a turn already fetched commits as
// usual, and the instance is held after it. Resuming delivers what was held,
// in the order it arrived, timers that fired meanwhile included. Pausing
// neither adds events to the history nor changes the instance's status: the
// pause state is read apart, with InstancePauseState, or with the record
// (InstanceInfo.Pause) on a provider that reports it there.
//
// Pause and resume are idempotent: pausing a paused instance changes nothing
// and reports false. An instance without record (never started, or whose
// start has not run yet) is an ErrNotFound error; an empty id an
// ErrInvalidInput error.
type InstancePauser interface {
	// PauseInstance pauses the instance; true when it was not paused.
	PauseInstance(ctx context.Context, instance string) (bool, error)
	// ResumeInstance resumes the instance; true when it was paused.
	ResumeInstance(ctx context.Context, instance string) (bool, error)
	// InstancePauseState reads the instance's pause state.
	InstancePauseState(ctx context.Context, instance string) (PauseState, error)
}
