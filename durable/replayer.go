package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// ReplayError reports that the registered orchestration code no longer
// produces a stored history: replaying execution Execution of Instance, code
// and history part ways at event EventID. ReplayHistory returns it; a CI
// check that replays recorded histories against new code fails on it before
// a deployment would fail the running instances as nondeterministic.
type ReplayError struct {
	Instance  string
	Execution uint64
	// EventID is the history event where code and history part; 0 when the
	// failure belongs to no single event (a cancellation mismatch found at
	// the end of the replay).
	EventID uint64
	// Expected is that event as history has it ("ActivityScheduled{...}"),
	// "" when history ends before it.
	Expected string
	// Got is what the code did there instead, in the same form; "" when it
	// did nothing (it returned, or still waits).
	Got string
	// Message says what differs: the replay engine's nondeterminism
	// message, or the recorded outcome against the code's.
	Message string
}

// Error names the instance, execution and event, and says what differs.
func (e *ReplayError) Error() string {
	return fmt.Sprintf("replay %s execution %d: nondeterministic at event %d: %s", e.Instance, e.Execution, e.EventID, e.Message)
}

// replayDeadlock bounds how long replayed code may run without yielding, as
// Options.TurnDeadlockTimeout does for a runtime.
const replayDeadlock = 5 * time.Second

// ReplayHistory replays the stored history of one instance against the code
// reg registers for it, without any provider or worker: activities are not
// run, their recorded results are fed back. history holds one or more
// executions, oldest first, each starting with its OrchestrationStarted
// event (id 1), as `duroxide-redis history --json` prints one and
// `history --all --json` prints all of them. Each execution is replayed on
// its own (a continue-as-new starts a new one), under the name and version
// its start recorded, with the KV store the executions before it left.
//
// The replay engine of the runtime does the matching: whatever it would
// fail as nondeterministic in a live turn is reported here, and, beyond
// what a live turn checks, stored events the code no longer reaches and an
// outcome (output, error, continue-as-new input, or still running) that
// differs from the recorded one; an execution the runtime failed on its own
// (poison, infrastructure) is checked up to that failure. A history that
// starts at a later execution (older ones pruned, or one execution
// exported) is replayed with the KV store empty where its predecessors
// would have left values. It returns nil when every execution
// replays clean, an error wrapping one *ReplayError per execution that does
// not, and an error wrapping duroxide.ErrInvalidInput (unusable history) or
// duroxide.ErrNotFound (orchestration not registered) otherwise.
func ReplayHistory(reg *Registry, history []duroxide.Event) error {
	if len(history) == 0 {
		return duroxide.Errorf("replay", duroxide.ErrInvalidInput, "empty history")
	}
	var errs []error
	var kv map[string]duroxide.KVEntry
	for i, exec := range splitExecutions(history) {
		if err := replayExecution(reg, exec, uint64(i+1), kv); err != nil {
			errs = append(errs, err)
		}
		kv = mergeKV(kv, exec)
	}
	return errors.Join(errs...)
}

// ReplayHistoryJSON is ReplayHistory over duroxide's event JSON: one or more
// arrays of events, as `duroxide-redis history --json` prints them (several
// outputs may be concatenated, oldest execution first).
func ReplayHistoryJSON(reg *Registry, r io.Reader) error {
	var history []duroxide.Event
	dec := json.NewDecoder(r)
	for {
		var events []duroxide.Event
		err := dec.Decode(&events)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return duroxide.Errorf("replay", duroxide.ErrInvalidInput, "decode history JSON: %v", err)
		}
		history = append(history, events...)
	}
	return ReplayHistory(reg, history)
}

// ReplayInstance reads every execution of instance through the provider's
// read-only admin calls (ReadExecutions) and replays them with
// ReplayHistory. It writes nothing.
func ReplayInstance(ctx context.Context, reg *Registry, admin duroxide.ProviderAdmin, instance string) error {
	execs, err := ReadExecutions(ctx, admin, instance)
	if err != nil {
		return err
	}
	return ReplayHistory(reg, slices.Concat(execs...))
}

// ReadExecutions reads the history of every execution of instance, oldest
// first, with read-only admin calls: what ReplayHistory replays, once
// concatenated, and what `duroxide-redis history --all --json` exports.
// An instance without executions is duroxide.ErrNotFound.
func ReadExecutions(ctx context.Context, admin duroxide.ProviderAdmin, instance string) ([][]duroxide.Event, error) {
	ids, err := admin.ListExecutions(ctx, instance)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, duroxide.Errorf("read_executions", duroxide.ErrNotFound, "instance %s has no executions", instance)
	}
	out := make([][]duroxide.Event, 0, len(ids))
	for _, id := range ids {
		events, err := admin.ReadHistoryWithExecutionID(ctx, instance, id)
		if err != nil {
			return nil, err
		}
		out = append(out, events)
	}
	return out, nil
}

// splitExecutions cuts an instance's history where each execution starts:
// event ids begin at 1 again.
func splitExecutions(history []duroxide.Event) [][]duroxide.Event {
	var out [][]duroxide.Event
	start := 0
	for i := 1; i < len(history); i++ {
		if history[i].EventID == duroxide.InitialEventID {
			out = append(out, history[start:i:i])
			start = i
		}
	}
	return append(out, history[start:])
}

// replayExecution replays one execution: the engine replays everything
// before its terminal event as stored history, in one turn with no new
// messages, and the events that turn would write must be the stored rest.
func replayExecution(reg *Registry, exec []duroxide.Event, position uint64, kv map[string]duroxide.KVEntry) (err error) {
	first := exec[0]
	instance, execution := first.InstanceID, first.ExecutionID
	if execution == 0 {
		execution = position
	}
	start, ok := first.Kind.(duroxide.OrchestrationStartedEvent)
	if !ok {
		return duroxide.Errorf("replay", duroxide.ErrInvalidInput,
			"execution %d of %s starts with %s, not OrchestrationStarted", execution, instance, first.Kind.EventType())
	}
	cut := len(exec)
	for i, ev := range exec {
		if engine.IsTerminal(ev.Kind) {
			cut = i
			break
		}
	}
	prefix, tail := exec[:cut:cut], exec[cut:]

	eng := engine.New(instance, execution, prefix)
	defer eng.Close()
	eng.CheckAll()
	b := engine.ReadBatch(nil, eng.Info(), instance)
	ver, code, ok := reg.resolve(b.Name, b.Version)
	if !ok {
		return duroxide.Errorf("replay", duroxide.ErrNotFound, "orchestration %s version %s (execution %d of %s) is not registered",
			start.Name, start.Version, execution, instance)
	}
	defer func() {
		if p := recover(); p != nil {
			d, isDeadlock := p.(*engine.Deadlock)
			if !isDeadlock {
				panic(p)
			}
			err = fmt.Errorf("replay %s execution %d: %w", instance, execution, d)
		}
	}()
	item := &duroxide.OrchestrationItem{
		Instance: instance, ExecutionID: execution, OrchestrationName: b.Name, Version: ver.String(),
		History: prefix, KVSnapshot: kv,
	}
	env := engine.Env{Clock: time.Now, Logger: slog.New(slog.DiscardHandler), DeadlockTimeout: replayDeadlock,
		ParentExecution: func(string) uint64 { return duroxide.InitialExecutionID }}
	commit, _ := eng.Turn(item, b, ver, engineFunc(code), env)
	if rerr := nondeterminismOf(instance, execution, commit.HistoryDelta, eng.Divergence()); rerr != nil {
		return rerr
	}
	if endedByRuntime(tail) {
		return nil
	}
	return compareTail(instance, execution, commit.HistoryDelta, tail)
}

// endedByRuntime reports an execution the runtime failed for reasons of its
// own (a poison message, an ack that could not be applied): its code never
// reached an outcome to compare with.
func endedByRuntime(tail []duroxide.Event) bool {
	if len(tail) == 0 {
		return false
	}
	f, ok := tail[0].Kind.(duroxide.OrchestrationFailedEvent)
	return ok && (f.Details.Poison != nil || f.Details.Infrastructure != nil)
}

// nondeterminismOf reports the replay engine's nondeterminism failure, if
// the turn wrote one.
func nondeterminismOf(instance string, execution uint64, delta []duroxide.Event, div *engine.Divergence) *ReplayError {
	for _, ev := range delta {
		f, ok := ev.Kind.(duroxide.OrchestrationFailedEvent)
		if !ok || f.Details.Configuration == nil {
			continue
		}
		e := &ReplayError{Instance: instance, Execution: execution, Message: engine.DisplayMessage(f.Details)}
		if div != nil {
			e.EventID, e.Expected, e.Got = div.Event.EventID, engine.Describe(div.Event.Kind), div.Action
		}
		return e
	}
	return nil
}

// compareTail checks the events the replayed turn wrote against the stored
// ones from the terminal event on. Values that are time (timestamps, fire
// times) and the ids duroxide leaves as placeholders are not compared.
func compareTail(instance string, execution uint64, delta, tail []duroxide.Event) error {
	for i := 0; i < max(len(delta), len(tail)); i++ {
		e := &ReplayError{Instance: instance, Execution: execution}
		switch {
		case i >= len(tail):
			e.EventID, e.Got = delta[i].EventID, engine.Describe(delta[i].Kind)
			e.Message = "history ends here, the code goes on with " + e.Got
		case i >= len(delta):
			e.EventID, e.Expected = tail[i].EventID, engine.Describe(tail[i].Kind)
			e.Message = "history goes on with " + e.Expected + ", the code does nothing more"
		default:
			same, err := sameEvent(delta[i], tail[i])
			if err != nil {
				return err
			}
			if same {
				continue
			}
			e.EventID, e.Expected, e.Got = tail[i].EventID, engine.Describe(tail[i].Kind), engine.Describe(delta[i].Kind)
			e.Message = "history has " + e.Expected + ", the code writes " + e.Got
		}
		return e
	}
	return nil
}

// volatileEventKeys are the event JSON keys a replay cannot reproduce.
var volatileEventKeys = []string{"timestamp_ms", "duroxide_version", "instance_id", "execution_id", "fire_at_ms", "last_updated_at_ms"}

func sameEvent(a, b duroxide.Event) (bool, error) {
	ja, err := maskedEvent(a)
	if err != nil {
		return false, err
	}
	jb, err := maskedEvent(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ja, jb), nil
}

func maskedEvent(ev duroxide.Event) ([]byte, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, k := range volatileEventKeys {
		delete(m, k)
	}
	return json.Marshal(m) // sorted keys: a canonical form
}

// mergeKV is the KV store after exec, given the one before it: its KV
// events applied in order, as the provider merges them when an execution
// ends.
func mergeKV(kv map[string]duroxide.KVEntry, exec []duroxide.Event) map[string]duroxide.KVEntry {
	out := maps.Clone(kv)
	if out == nil {
		out = map[string]duroxide.KVEntry{}
	}
	for _, ev := range exec {
		switch k := ev.Kind.(type) {
		case duroxide.KeyValueSetEvent:
			out[k.Key] = duroxide.KVEntry{Value: k.Value, LastUpdatedAtMs: k.LastUpdatedAtMs}
		case duroxide.KeyValueClearedEvent:
			delete(out, k.Key)
		case duroxide.KeyValuesClearedEvent:
			clear(out)
		}
	}
	return out
}
