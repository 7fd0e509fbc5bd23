package engine

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

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

// Describe renders an event kind for people: its type and the fields that
// are set, pointers followed and strings quoted. Nondeterminism messages
// use the shorter EventWords.
func Describe(k duroxide.EventKind) string {
	return k.EventType() + describeValue(reflect.ValueOf(k))
}

func describeValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "<nil>"
		}
		return describeValue(v.Elem())
	case reflect.Struct:
		var parts []string
		for i := range v.NumField() {
			f, field := v.Field(i), v.Type().Field(i)
			if !field.IsExported() || isNilable(f) && f.IsNil() {
				continue
			}
			parts = append(parts, field.Name+":"+describeValue(f))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = describeValue(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

func isNilable(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return true
	}
	return false
}
