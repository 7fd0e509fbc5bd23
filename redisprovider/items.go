package redisprovider

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// as returns item as variant T. Work items may arrive as values or
// pointers (both implement WorkItem); as accepts both.
func as[T any](item duroxide.WorkItem) (T, bool) {
	switch v := any(item).(type) {
	case T:
		return v, true
	case *T:
		if v != nil {
			return *v, true
		}
	}
	var zero T
	return zero, false
}

// isNilItem reports a nil interface or a nil pointer inside it (calling
// InstanceID on the latter would panic).
func isNilItem(item duroxide.WorkItem) bool {
	if item == nil {
		return true
	}
	v := reflect.ValueOf(item)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// kindValue returns an event's kind as a value: callers may build events
// with pointer kinds, which encode the same.
func kindValue(e duroxide.Event) duroxide.EventKind {
	v := reflect.ValueOf(e.Kind)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if k, ok := v.Elem().Interface().(duroxide.EventKind); ok {
			return k
		}
	}
	return e.Kind
}

// orchestratorItem validates a message bound for the orchestrator queue and
// returns its target instance and JSON.
func orchestratorItem(op string, item duroxide.WorkItem) (instance string, body []byte, err error) {
	if isNilItem(item) {
		return "", nil, invalid(op, "nil work item")
	}
	if _, ok := as[duroxide.ActivityExecute](item); ok {
		return "", nil, invalid(op, "ActivityExecute belongs to the worker queue, not the orchestrator queue")
	}
	instance = item.InstanceID()
	if instance == "" {
		return "", nil, invalid(op, "work item %T has an empty instance id", item)
	}
	body, err = duroxide.MarshalWorkItem(item)
	if err != nil {
		return "", nil, invalid(op, "work item of instance %q: %v", instance, err)
	}
	return instance, body, nil
}

// workerItem validates a message bound for the worker queue and appends its
// arguments, in the order enqueue_worker.lua and ack_orchestration.lua read
// them: json, tag queue, session (opt), instance, execution id, activity id,
// activity name (the scripts find its priority by it).
func (a *args) workerItem(op string, item duroxide.WorkItem) error {
	if isNilItem(item) {
		return invalid(op, "nil work item")
	}
	act, ok := as[duroxide.ActivityExecute](item)
	if !ok {
		return invalid(op, "the worker queue takes only ActivityExecute, got %T", item)
	}
	if act.Instance == "" {
		return invalid(op, "ActivityExecute %q has an empty instance id", act.Name)
	}
	body, err := duroxide.MarshalWorkItem(act)
	if err != nil {
		return invalid(op, "ActivityExecute of instance %q: %v", act.Instance, err)
	}
	a.str(string(body)).str(queueOf(act.Tag)).opt(act.SessionID)
	a.str(act.Instance).u64(act.ExecutionID).u64(act.ID)
	key := ""
	if act.LimitKey != nil {
		// never '' for a key given: '' means none to the scripts
		key = "+" + *act.LimitKey
	}
	// the name finds the activity's priority and limit group (lua/lib_work.lua
	// W.enqueue, lua/lib_lim.lua), the key its group
	a.str(act.Name).str(key)
	return nil
}

// queueOf names the tag queue of an activity: 'd' untagged, 't:<tag>' tagged.
func queueOf(tag *string) string {
	if tag == nil {
		return "d"
	}
	return "t:" + *tag
}

// canonVersion writes a version as the scripts compare it: major.minor.patch
// and prerelease; build metadata does not take part in precedence.
func canonVersion(v *semver.Version) string {
	if v == nil {
		return ""
	}
	s := fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch())
	if pre := v.Prerelease(); pre != "" {
		s += "-" + pre
	}
	return s
}

// filterSpec encodes a capability filter for the fetch script ('*' none,
// ” no range, 'min,max;...' otherwise) with a short id naming its wake key.
func filterSpec(f *duroxide.DispatcherCapabilityFilter) (enc, id string) {
	if f == nil {
		return "*", "any"
	}
	ranges := make([]string, len(f.SupportedDuroxideVersions))
	for i, r := range f.SupportedDuroxideVersions {
		ranges[i] = canonVersion(r.Min) + "," + canonVersion(r.Max)
	}
	enc = strings.Join(ranges, ";")
	sum := sha1.Sum([]byte(enc))
	return enc, hex.EncodeToString(sum[:8])
}

// checkDurations rejects negative durations: a negative lock or delay is a
// caller bug, not "none".
func checkDurations(op string, ds ...time.Duration) error {
	for _, d := range ds {
		if d < 0 {
			return invalid(op, "negative duration %v", d)
		}
	}
	return nil
}

// lockFor returns the lock duration to use for a caller's lockTimeout.
func (p *partition) lockFor(d time.Duration) time.Duration {
	if d == 0 {
		return p.lockTimeout
	}
	return d
}
