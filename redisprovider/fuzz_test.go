package redisprovider_test

// Fuzz targets for the provider calls (reliability issue, item 4 "Bad input").
//
// Every target drives the real provider against one miniredis per target
// (per fuzz worker process). Each input starts from an empty namespace and a
// frozen server clock (fuzzEnv.reset), so an input behaves the same every time
// it runs. The properties, for every input:
//
//   - no call panics;
//   - a call either succeeds, and then its effect reads back exactly, or fails
//     with a permanent *duroxide.ProviderError whose Operation is the call's
//     duroxide name, and then the namespace is byte-for-byte what it was
//     before the call (every key, type, content and TTL: nsState);
//   - what the contract calls invalid input (empty instance ids, wrong-queue
//     items, event id 0, duplicate or decreasing event ids, values the codec
//     cannot encode, KV entries over the limits, unknown or expired lock
//     tokens) is rejected, and what it allows is accepted (the verdict type).
//
// The structured inputs (work items, events, commits) are decoded from the
// []byte argument by fuzzProg; string fields are picked from a small pool that
// holds the target's string arguments, hostile constants and oversized
// strings, so that the fuzzer controls both the shape and the content. The
// seed corpora (the *Seeds functions) are assembled with prog(), which writes
// the same encoding fuzzProg reads.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Operation names the provider must put in its errors.
const (
	opEnqueueOrch = "enqueue_for_orchestrator"
	opEnqueueWork = "enqueue_for_worker"
	opAckOrch     = "ack_orchestration_item"
	opAbandonOrch = "abandon_orchestration_item"
	opRenewOrch   = "renew_orchestration_item_lock"
	opAckWork     = "ack_work_item"
	opAbandonWork = "abandon_work_item"
	opRenewWork   = "renew_work_item_lock"
	opAppend      = "append_with_execution"
	opRead        = "read"
	opReadExec    = "read_with_execution"
	opKVValue     = "get_kv_value"
	opKVAll       = "get_kv_all_values"
	opStatus      = "get_custom_status"
	opStats       = "get_instance_stats"
)

// FuzzEnqueue proves that EnqueueForOrchestrator and EnqueueForWorker, given
// any work item variant (value or pointer form, nil, typed nil, wrong queue)
// with arbitrary instance ids and payloads and any delay, either accept it and
// then hand exactly that item back (JSON-identical) to a fetch, not before its
// delay has passed, or reject it permanently, naming the operation, with the
// namespace unchanged. Valid items are never rejected; invalid ones never
// accepted.
func FuzzEnqueue(f *testing.F) {
	for _, s := range enqueueSeeds() {
		f.Add(s.instance, s.payload, s.delay, s.prog)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, instance, payload string, delay int64, data []byte) {
		env.reset()
		r := newFuzzProg(data, instance, payload, "")
		toWorker := r.flag()
		item := r.workItem()
		d := time.Duration(delay)

		op, v := opEnqueueOrch, verdict{reject: orchItemProblem(item)}
		if toWorker {
			op, v = opEnqueueWork, verdict{reject: workerItemProblem(item)}
		} else if d < 0 {
			v.rejectIf("negative delay")
		}
		if _, ok := deref(item).(duroxide.QueueMessage); ok && v.reject == "" {
			// a QueueMessage for an instance without history is dropped by
			// the fetch (orphan rule): give it a history to round-trip
			env.appendStarted(t, item.InstanceID())
		}

		before := env.snapshot(t)
		var err error
		if toWorker {
			err = env.p.EnqueueForWorker(fuzzCtx, item)
		} else {
			err = env.p.EnqueueForOrchestrator(fuzzCtx, item, d)
		}
		if env.judge(t, v, op, err, before, describeItem(item)) {
			return
		}
		if toWorker {
			env.wantWorkerRoundTrip(t, item)
		} else {
			env.wantOrchestratorRoundTrip(t, item, d)
		}
	})
}

// FuzzAckCommit proves that AckOrchestrationItem on a real locked instance
// (fuzzed id, with or without a prior turn in its history) commits any valid
// turn exactly (history, KV view and custom status read back as the commit
// says) and rejects any invalid one (event id 0, duplicate or decreasing ids
// also against the stored history, unencodable events or items, wrong-queue
// or nil items, empty instance ids, KV entries over the limits, execution id
// 0) permanently, naming the operation, without writing anything, and with
// the lock still held: a valid ack with the same token then succeeds.
func FuzzAckCommit(f *testing.F) {
	for _, s := range ackSeeds() {
		f.Add(s.instance, s.s1, s.s2, s.prog)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, instance, s1, s2 string, data []byte) {
		env.reset()
		inst := usableID(instance)
		r := newFuzzProg(data, instance, s1, s2)
		prior := r.pick(3)
		token, history := env.lockInstance(t, inst, prior)
		c := r.commit(inst, uint64(len(history)))
		v := ackVerdict(c, uint64(len(history)))

		before := env.snapshot(t)
		err := env.p.AckOrchestrationItem(fuzzCtx, token, c)
		if env.judge(t, v, opAckOrch, err, before, describeCommit(c)) {
			// the rejected ack kept the lock: a valid ack with it succeeds
			if err := env.p.AckOrchestrationItem(fuzzCtx, token, emptyTurn()); err != nil {
				t.Fatalf("lock lost after a rejected ack: a valid ack with the same token failed: %v", err)
			}
			env.wantRead(t, inst, history)
			return
		}
		env.wantCommitted(t, inst, history, c)
	})
}

// FuzzTokens proves that every ack, abandon and renew method, orchestration
// and worker, given a token that is not a live lock of its kind (arbitrary
// bytes, empty, the other kind's live token, a live token with a prefix,
// suffix or changed case, an expired lock for ack and renew, instance ids and
// item sequence numbers that the token indexes map to) fails permanently with
// an error that names the operation and contains "lock_token", writes
// nothing, and leaves the live locks valid: renewed by any positive
// duration, they ack afterwards. Invalid arguments (a negative duration, an
// invalid commit, a completion for the wrong queue), also with the live
// token of the method's own kind, are rejected the same way (without the
// "lock_token" requirement) and do not consume the lock.
func FuzzTokens(f *testing.F) {
	for _, s := range tokenSeeds() {
		f.Add(s.token, s.prog)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, token string, data []byte) {
		env.reset()
		locks := env.liveLocks(t)
		r := newFuzzProg(data, token, "", "")
		for step := 0; step == 0 || (step < 8 && r.more()); step++ {
			method := r.pick(6)
			tok, live := locks.transform(r, token, method)
			if !live {
				method = locks.notLiveFor(method, tok)
			}
			before := env.snapshot(t)
			op, badArgs, err := env.callWithToken(r, method, tok, live)
			switch {
			case err == nil && live:
				t.Fatalf("%s accepted invalid arguments", op)
			case err == nil:
				t.Fatalf("%s accepted token %s, which is not a live lock of its kind", op, short(tok))
			}
			env.wantUnchanged(t, op, err, before)
			if !badArgs && !strings.Contains(err.Error(), "lock_token") {
				t.Fatalf("%s: error for token %s does not contain \"lock_token\": %s", op, short(tok), short(err.Error()))
			}
		}
		locks.wantStillValid(t, env, r)
	})
}

// FuzzAppendAndRead proves that AppendWithExecution with any instance id,
// execution id (0 and 2^64-1 included) and event list either stores the
// events so that ReadWithExecution (and Read, for the latest execution)
// returns them exactly, in order, after what was stored before, or rejects
// the append permanently, naming the operation, with nothing written. Read
// and ReadWithExecution of an empty instance id fail permanently.
func FuzzAppendAndRead(f *testing.F) {
	for _, s := range appendSeeds() {
		f.Add(s.instance, s.s1, s.prog)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, instance, s1 string, data []byte) {
		env.reset()
		r := newFuzzProg(data, instance, s1, "")
		exec := r.executionID()
		prior := r.pick(3)
		r.inst, r.exec = usableID(instance), exec
		history := env.appendPrior(t, instance, exec, prior)
		events := r.events(r.pick(9), uint64(len(history)))
		v := appendVerdict(instance, exec, events, uint64(len(history)))

		before := env.snapshot(t)
		err := env.p.AppendWithExecution(fuzzCtx, instance, exec, events)
		if env.judge(t, v, opAppend, err, before, describeEvents(events)) {
			if instance == "" {
				_, err := env.p.Read(fuzzCtx, instance)
				wantPermanent(t, opRead, err)
				_, err = env.p.ReadWithExecution(fuzzCtx, instance, exec)
				wantPermanent(t, opReadExec, err)
				return
			}
			env.wantReadExecution(t, instance, exec, history)
			return
		}
		want := append(append([]duroxide.Event(nil), history...), events...)
		env.wantReadExecution(t, instance, exec, want)
		// the only execution is the latest, record or not
		env.wantRead(t, instance, want)
	})
}

// FuzzKV proves that the read-only calls GetKVValue, GetKVAllValues (and
// Read, GetCustomStatus, GetInstanceStats) with arbitrary instance ids and
// keys never fail except with a permanent invalid-input error for an empty
// instance id, return found=false / empty / nil for unknown instances and
// keys, return exactly the live KV view (store and delta, tombstones applied)
// that one or two acked turns wrote, and never write to the namespace.
func FuzzKV(f *testing.F) {
	for _, s := range kvSeeds() {
		f.Add(s.instance, s.key, s.prog)
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, instance, key string, data []byte) {
		env.reset()
		r := newFuzzProg(data, instance, key, "v")
		owner := usableID(instance)
		w := env.writeKV(t, r, owner)

		before := env.snapshot(t)
		for q, n := 0, r.pick(16); q == 0 || q < n; q++ {
			inst := w.queryInstance(r, instance)
			k := w.queryKey(r, key)
			w.check(t, env, inst, k)
		}
		if d := before.diff(env.snapshot(t)); d != "" {
			t.Fatalf("read-only calls changed the namespace:\n%s", d)
		}
	})
}

// ---------------------------------------------------------------------------
// Environment

var fuzzCtx = context.Background()

// fuzzClock is the server time every input starts at: miniredis's TIME
// follows SetTime, so locks and delays are deterministic.
var fuzzClock = time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)

// maxClock is the latest time miniredis's clock can be set to: its TIME
// goes negative once Unix nanoseconds overflow int64 (year 2262).
var maxClock = time.Unix(0, math.MaxInt64).Add(-time.Hour)

// fuzzTimestamp is the TimestampMs of events the tests build themselves.
const fuzzTimestamp = 1_700_000_000_000

// fuzzEnv is one miniredis and one provider shared by every input of a
// target; reset gives each input an empty namespace.
type fuzzEnv struct {
	m *miniredis.Miniredis
	p *redisprovider.Provider
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	f.Helper()
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(m.Close)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	f.Cleanup(func() { rdb.Close() })
	p, err := redisprovider.New(fuzzCtx, redisprovider.Options{
		Client:    rdb,
		Namespace: "fuzz",
		Logger:    slog.New(slog.DiscardHandler), // orphan drops are expected here
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close() })
	return &fuzzEnv{m: m, p: p}
}

// reset empties the server (the provider keeps no state of its own outside
// Redis) and sets the clock back to fuzzClock.
func (e *fuzzEnv) reset() {
	e.m.FlushAll()
	e.m.SetTime(fuzzClock)
}

// nsState is an image of the whole server: key -> type, full contents and
// TTL. The clock is frozen, so TTLs (only wake-up markers have one) compare
// exactly too.
type nsState map[string]string

func (e *fuzzEnv) snapshot(t *testing.T) nsState {
	t.Helper()
	s := nsState{}
	for _, k := range e.m.Keys() {
		s[k] = e.describeKey(t, k)
	}
	return s
}

func (e *fuzzEnv) describeKey(t *testing.T, k string) string {
	t.Helper()
	var b strings.Builder
	typ := e.m.Type(k)
	b.WriteString(typ)
	var err error
	switch typ {
	case "string":
		var v string
		v, err = e.m.Get(k)
		fmt.Fprintf(&b, " %q", v)
	case "hash":
		var fields []string
		fields, err = e.m.HKeys(k)
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(&b, " %q=%q", f, e.m.HGet(k, f))
		}
	case "list":
		var l []string
		l, err = e.m.List(k)
		for _, v := range l {
			fmt.Fprintf(&b, " %q", v)
		}
	case "set":
		var members []string
		members, err = e.m.Members(k)
		sort.Strings(members)
		for _, v := range members {
			fmt.Fprintf(&b, " %q", v)
		}
	case "zset":
		var scores map[string]float64
		scores, err = e.m.SortedSet(k)
		members := make([]string, 0, len(scores))
		for m := range scores {
			members = append(members, m)
		}
		sort.Strings(members)
		for _, m := range members {
			fmt.Fprintf(&b, " %q=%s", m, strconv.FormatFloat(scores[m], 'g', -1, 64))
		}
	default:
		t.Fatalf("key %s has unexpected type %q", short(k), typ)
	}
	if err != nil {
		t.Fatalf("reading key %s: %v", short(k), err)
	}
	if ttl := e.m.TTL(k); ttl != 0 {
		fmt.Fprintf(&b, " ttl=%v", ttl)
	}
	return b.String()
}

// diff describes how o differs from s ("" when equal).
func (s nsState) diff(o nsState) string {
	var out []string
	for k, v := range s {
		w, ok := o[k]
		switch {
		case !ok:
			out = append(out, "deleted "+short(k))
		case v != w:
			out = append(out, fmt.Sprintf("changed %s\n    before %s\n    after  %s", short(k), short(v), short(w)))
		}
	}
	for k, w := range o {
		if _, ok := s[k]; !ok {
			out = append(out, fmt.Sprintf("created %s = %s", short(k), short(w)))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// wantPermanent fails unless err is a permanent *duroxide.ProviderError of
// operation op whose text names op, with a kind.
func wantPermanent(t *testing.T, op string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: expected a permanent error, got none", op)
	}
	var pe *duroxide.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error is a %T, not a *duroxide.ProviderError: %s", op, err, short(err.Error()))
	}
	if duroxide.IsRetryable(err) {
		t.Fatalf("%s: retryable error (nothing here is transient: rejections must be permanent): %s", op, short(err.Error()))
	}
	if pe.Operation != op || !strings.Contains(err.Error(), op) {
		t.Fatalf("error does not name operation %s (Operation %q): %s", op, pe.Operation, short(err.Error()))
	}
	if pe.Kind == nil {
		t.Fatalf("%s: permanent error without a kind (callers cannot classify it): %s", op, short(err.Error()))
	}
}

// wantUnchanged checks a rejected call: permanent error naming op, and the
// namespace exactly as before.
func (e *fuzzEnv) wantUnchanged(t *testing.T, op string, err error, before nsState) {
	t.Helper()
	wantPermanent(t, op, err)
	if d := before.diff(e.snapshot(t)); d != "" {
		t.Fatalf("%s was rejected (%s) but changed the namespace:\n%s", op, short(err.Error()), d)
	}
}

// verdict is the contract's judgement of an input: reject names why it is
// invalid; unsure names why the contract leaves the outcome open (both are
// then accepted as long as a rejection is clean).
type verdict struct{ reject, unsure string }

func (v *verdict) rejectIf(why string) {
	if v.reject == "" {
		v.reject = why
	}
}

func (v *verdict) unsureIf(why string) {
	if v.unsure == "" {
		v.unsure = why
	}
}

// judge checks the outcome of a call: a rejection must be permanent, name
// op and leave the namespace as it was in before (checked first: a partial
// write is the worse bug), and must match the verdict. Reports whether the
// call was rejected.
func (e *fuzzEnv) judge(t *testing.T, v verdict, op string, err error, before nsState, input string) (rejected bool) {
	t.Helper()
	if err != nil {
		e.wantUnchanged(t, op, err, before)
	}
	switch {
	case err != nil && v.reject == "" && v.unsure == "":
		t.Fatalf("%s rejected valid input: %s\ninput: %s", op, short(err.Error()), input)
	case err == nil && v.reject != "":
		t.Fatalf("%s accepted invalid input (%s)\ninput: %s", op, v.reject, input)
	}
	return err != nil
}

// usableID turns a fuzzed id into one every call accepts (non-empty, valid
// UTF-8), for setup steps that need an instance to exist.
func usableID(s string) string {
	if s != "" && utf8.ValidString(s) {
		return s
	}
	return "fuzz:" + strings.ToValidUTF8(s, "?")
}

// mkEvent builds an event with the fixed test timestamp.
func mkEvent(id uint64, inst string, exec uint64, kind duroxide.EventKind) duroxide.Event {
	return duroxide.Event{EventID: id, InstanceID: inst, ExecutionID: exec, TimestampMs: fuzzTimestamp,
		DuroxideVersion: duroxide.CurrentDuroxideVersion, Kind: kind}
}

// emptyTurn is a valid commit for any lock: no events, the instance named.
func emptyTurn() duroxide.OrchestrationCommit {
	return duroxide.OrchestrationCommit{ExecutionID: 1, Metadata: duroxide.ExecutionMetadata{OrchestrationName: "O"}}
}

func (e *fuzzEnv) mustEnqueue(t *testing.T, item duroxide.WorkItem) {
	t.Helper()
	var err error
	if _, ok := item.(duroxide.ActivityExecute); ok {
		err = e.p.EnqueueForWorker(fuzzCtx, item)
	} else {
		err = e.p.EnqueueForOrchestrator(fuzzCtx, item, 0)
	}
	if err != nil {
		t.Fatalf("setup: enqueue %s: %v", describeItem(item), err)
	}
}

// mustFetch locks the next orchestration item, which must be inst's.
func (e *fuzzEnv) mustFetch(t *testing.T, inst string, lock time.Duration) *duroxide.OrchestrationItem {
	t.Helper()
	item, err := e.p.FetchOrchestrationItem(fuzzCtx, lock, 0, nil)
	if err != nil || item == nil {
		t.Fatalf("setup: fetch of %s: item %v, error %v", short(inst), item != nil, err)
	}
	if item.Instance != inst {
		t.Fatalf("setup: fetched instance %s, want %s", short(item.Instance), short(inst))
	}
	return item
}

// mustFetchWork locks the next worker item of the default queue.
func (e *fuzzEnv) mustFetchWork(t *testing.T, lock time.Duration) *duroxide.LockedWorkItem {
	t.Helper()
	w, err := e.p.FetchWorkItem(fuzzCtx, lock, 0, nil, duroxide.DefaultOnly())
	if err != nil || w == nil {
		t.Fatalf("setup: worker fetch: item %v, error %v", w != nil, err)
	}
	return w
}

func (e *fuzzEnv) mustAck(t *testing.T, token string, c duroxide.OrchestrationCommit) {
	t.Helper()
	if err := e.p.AckOrchestrationItem(fuzzCtx, token, c); err != nil {
		t.Fatalf("setup: ack: %v", err)
	}
}

// appendStarted gives inst a history (execution 1, one OrchestrationStarted).
func (e *fuzzEnv) appendStarted(t *testing.T, inst string) {
	t.Helper()
	ev := mkEvent(1, inst, 1, duroxide.OrchestrationStartedEvent{Name: "O", Input: "in"})
	if err := e.p.AppendWithExecution(fuzzCtx, inst, 1, []duroxide.Event{ev}); err != nil {
		t.Fatalf("setup: append history of %s: %v", short(inst), err)
	}
}

// lockInstance starts inst and locks it. With prior > 0 a first turn stores
// events 1..prior (and creates the instance record) before the instance is
// locked again by a new message. Returns the token and the stored events.
func (e *fuzzEnv) lockInstance(t *testing.T, inst string, prior int) (string, []duroxide.Event) {
	t.Helper()
	e.mustEnqueue(t, duroxide.StartOrchestration{Instance: inst, Orchestration: "O", Input: "in", ExecutionID: 1})
	item := e.mustFetch(t, inst, time.Hour)
	if prior == 0 {
		return item.LockToken, nil
	}
	history := []duroxide.Event{mkEvent(1, inst, 1, duroxide.OrchestrationStartedEvent{Name: "O", Version: "1.0.0", Input: "in"})}
	for id := uint64(2); id <= uint64(prior); id++ {
		history = append(history, mkEvent(id, inst, 1, duroxide.ExternalEventEvent{Name: "e", Data: "d"}))
	}
	e.mustAck(t, item.LockToken, duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: history,
		Metadata: duroxide.ExecutionMetadata{Status: "Running", OrchestrationName: "O", OrchestrationVersion: "1.0.0"}})
	e.mustEnqueue(t, duroxide.ExternalRaised{Instance: inst, Name: "e", Data: "d"})
	return e.mustFetch(t, inst, time.Hour).LockToken, history
}

// appendPrior stores events 1..n for (inst, exec) when that is valid input;
// returns what was stored.
func (e *fuzzEnv) appendPrior(t *testing.T, inst string, exec uint64, n int) []duroxide.Event {
	t.Helper()
	if n == 0 || inst == "" || exec == 0 {
		return nil
	}
	var events []duroxide.Event
	for id := uint64(1); id <= uint64(n); id++ {
		events = append(events, mkEvent(id, usableID(inst), exec, duroxide.ExternalEventEvent{Name: "prior", Data: "p"}))
	}
	before := e.snapshot(t)
	err := e.p.AppendWithExecution(fuzzCtx, inst, exec, events)
	if e.judge(t, appendVerdict(inst, exec, events, 0), opAppend, err, before, "setup "+describeEvents(events)) {
		return nil // the provider may refuse ids that are not UTF-8
	}
	return events
}

// ---------------------------------------------------------------------------
// Oracles

// eventsProblem says why events cannot be stored after storedMax (the last
// stored id of the execution), or "".
func eventsProblem(events []duroxide.Event, storedMax uint64) string {
	prev := storedMax
	for i, ev := range events {
		if ev.EventID == 0 {
			return fmt.Sprintf("event %d has event_id 0", i)
		}
		if _, err := ev.MarshalJSON(); err != nil {
			return fmt.Sprintf("event %d cannot be encoded: %v", i, err)
		}
		if ev.EventID <= prev {
			return fmt.Sprintf("event_id %d is not after %d", ev.EventID, prev)
		}
		prev = ev.EventID
	}
	return ""
}

// kvProblem says which KV event of a delta exceeds the provider's limits.
func kvProblem(events []duroxide.Event) string {
	for i, ev := range events {
		switch k := derefKind(ev.Kind).(type) {
		case duroxide.KeyValueSetEvent:
			if len(k.Key) > redisprovider.MaxKVKeyBytes || len(k.Value) > redisprovider.MaxKVValueBytes {
				return fmt.Sprintf("event %d: KV key %d / value %d bytes over the limits", i, len(k.Key), len(k.Value))
			}
		case duroxide.KeyValueClearedEvent:
			if len(k.Key) > redisprovider.MaxKVKeyBytes {
				return fmt.Sprintf("event %d: KV key of %d bytes over the limit", i, len(k.Key))
			}
		}
	}
	return ""
}

// isNil reports a nil item or a typed nil pointer.
func isNil(x any) bool {
	if x == nil {
		return true
	}
	v := reflect.ValueOf(x)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// deref returns the value form of a work item given as a pointer.
func deref(item duroxide.WorkItem) duroxide.WorkItem {
	if isNil(item) {
		return nil
	}
	if v := reflect.ValueOf(item); v.Kind() == reflect.Pointer {
		return v.Elem().Interface().(duroxide.WorkItem)
	}
	return item
}

// derefKind returns the value form of an event kind given as a pointer.
func derefKind(k duroxide.EventKind) duroxide.EventKind {
	if isNil(k) {
		return nil
	}
	if v := reflect.ValueOf(k); v.Kind() == reflect.Pointer {
		return v.Elem().Interface().(duroxide.EventKind)
	}
	return k
}

// orchItemProblem says why item cannot go to the orchestrator queue, or "".
func orchItemProblem(item duroxide.WorkItem) string {
	switch v := deref(item).(type) {
	case nil:
		return "nil work item"
	case duroxide.ActivityExecute:
		return "ActivityExecute sent to the orchestrator queue"
	default:
		if v.InstanceID() == "" {
			return "empty instance id"
		}
	}
	if _, err := duroxide.MarshalWorkItem(item); err != nil {
		return "unencodable: " + err.Error()
	}
	return ""
}

// workerItemProblem says why item cannot go to the worker queue, or "".
func workerItemProblem(item duroxide.WorkItem) string {
	act, ok := deref(item).(duroxide.ActivityExecute)
	switch {
	case isNil(item):
		return "nil work item"
	case !ok:
		return fmt.Sprintf("%T sent to the worker queue", item)
	case act.Instance == "":
		return "empty instance id"
	}
	if _, err := duroxide.MarshalWorkItem(item); err != nil {
		return "unencodable: " + err.Error()
	}
	return ""
}

// ackVerdict judges a commit for an instance whose execution 1 holds events
// up to storedMax.
func ackVerdict(c duroxide.OrchestrationCommit, storedMax uint64) verdict {
	var v verdict
	if c.ExecutionID == 0 {
		v.rejectIf("execution id 0")
	}
	if c.ExecutionID != 1 {
		storedMax = 0
	}
	if p := eventsProblem(c.HistoryDelta, storedMax); p != "" {
		v.rejectIf(p)
	}
	if p := kvProblem(c.HistoryDelta); p != "" {
		v.rejectIf(p)
	}
	for i, item := range c.WorkerItems {
		if p := workerItemProblem(item); p != "" {
			v.rejectIf(fmt.Sprintf("worker item %d: %s", i, p))
		}
	}
	for i, item := range c.OrchestratorItems {
		if p := orchItemProblem(item); p != "" {
			v.rejectIf(fmt.Sprintf("orchestrator item %d: %s", i, p))
		}
	}
	for i, x := range c.CancelledActivities {
		if x.Instance == "" {
			v.rejectIf(fmt.Sprintf("cancelled activity %d: empty instance id", i))
		}
		if !utf8.ValidString(x.Instance) {
			v.unsureIf("cancelled activity instance id is not UTF-8")
		}
	}
	m := c.Metadata
	for _, s := range []string{m.Status, deref0(m.Output), m.OrchestrationName, m.OrchestrationVersion, m.ParentInstanceID} {
		if !utf8.ValidString(s) {
			v.unsureIf("metadata string is not UTF-8 (stored as bytes, not JSON)")
		}
	}
	return v
}

// appendVerdict judges an AppendWithExecution.
func appendVerdict(inst string, exec uint64, events []duroxide.Event, storedMax uint64) verdict {
	var v verdict
	if inst == "" {
		v.rejectIf("empty instance id")
	}
	if exec == 0 {
		v.rejectIf("execution id 0")
	}
	if p := eventsProblem(events, storedMax); p != "" {
		v.rejectIf(p)
	}
	if !utf8.ValidString(inst) {
		v.unsureIf("instance id is not UTF-8 (it is not part of the stored JSON)")
	}
	return v
}

func deref0(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ---------------------------------------------------------------------------
// Read-back checks

// eventsJSON encodes events as duroxide writes them, for exact comparison.
func eventsJSON(t *testing.T, events []duroxide.Event) []string {
	t.Helper()
	out := make([]string, len(events))
	for i, ev := range events {
		b, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("event %d read back cannot be encoded: %v", i, err)
		}
		out[i] = string(b)
	}
	return out
}

func sameEvents(t *testing.T, what string, got, want []duroxide.Event) {
	t.Helper()
	g, w := eventsJSON(t, got), eventsJSON(t, want)
	if len(g) != len(w) {
		t.Fatalf("%s: read %d events, want %d\n got %s\nwant %s", what, len(g), len(w), short(strings.Join(g, "\n")), short(strings.Join(w, "\n")))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: event %d differs\n got %s\nwant %s", what, i, short(g[i]), short(w[i]))
		}
	}
}

func (e *fuzzEnv) wantRead(t *testing.T, inst string, want []duroxide.Event) {
	t.Helper()
	got, err := e.p.Read(fuzzCtx, inst)
	if err != nil {
		t.Fatalf("Read(%s): %v", short(inst), err)
	}
	sameEvents(t, "Read("+short(inst)+")", got, want)
}

func (e *fuzzEnv) wantReadExecution(t *testing.T, inst string, exec uint64, want []duroxide.Event) {
	t.Helper()
	got, err := e.p.ReadWithExecution(fuzzCtx, inst, exec)
	if err != nil {
		t.Fatalf("ReadWithExecution(%s, %d): %v", short(inst), exec, err)
	}
	sameEvents(t, fmt.Sprintf("ReadWithExecution(%s, %d)", short(inst), exec), got, want)
}

// wantCommitted checks what an accepted commit left behind: the history of
// its execution (after history when it is execution 1), Read's latest
// execution (the commit's: history is on execution 1 at most), the live KV
// view and the custom status.
func (e *fuzzEnv) wantCommitted(t *testing.T, inst string, history []duroxide.Event, c duroxide.OrchestrationCommit) {
	t.Helper()
	// a record exists when the prior turn or this one named the orchestration;
	// without one, KV and custom status writes are dropped
	record := len(history) > 0 || c.Metadata.OrchestrationName != ""
	var want []duroxide.Event
	if c.ExecutionID == 1 {
		want = append(want, history...)
	}
	want = append(want, c.HistoryDelta...)
	e.wantReadExecution(t, inst, c.ExecutionID, want)
	e.wantRead(t, inst, want)

	kv := map[string]string{}
	if record {
		applyKV(kv, c.HistoryDelta)
	}
	e.wantKV(t, inst, kv)

	var wantStatus *duroxide.CustomStatus
	for _, ev := range c.HistoryDelta {
		if cs, ok := derefKind(ev.Kind).(duroxide.CustomStatusUpdatedEvent); ok && record {
			wantStatus = &duroxide.CustomStatus{Status: cs.Status, Version: 1}
		}
	}
	got, err := e.p.GetCustomStatus(fuzzCtx, inst, 0)
	if err != nil {
		t.Fatalf("GetCustomStatus: %v", err)
	}
	if !reflect.DeepEqual(got, wantStatus) {
		t.Fatalf("custom status %s, want %s", describeStatus(got), describeStatus(wantStatus))
	}
}

// applyKV applies the KV events of a delta to a live view.
func applyKV(view map[string]string, events []duroxide.Event) {
	for _, ev := range events {
		switch k := derefKind(ev.Kind).(type) {
		case duroxide.KeyValueSetEvent:
			view[k.Key] = k.Value
		case duroxide.KeyValueClearedEvent:
			delete(view, k.Key)
		case duroxide.KeyValuesClearedEvent:
			clear(view)
		}
	}
}

// wantKV checks GetKVAllValues and GetKVValue of every key against view.
func (e *fuzzEnv) wantKV(t *testing.T, inst string, view map[string]string) {
	t.Helper()
	all, err := e.p.GetKVAllValues(fuzzCtx, inst)
	if err != nil {
		t.Fatalf("GetKVAllValues(%s): %v", short(inst), err)
	}
	if len(all) != len(view) {
		t.Fatalf("GetKVAllValues(%s): %d keys, want %d", short(inst), len(all), len(view))
	}
	for k, want := range view {
		if got, ok := all[k]; !ok || got != want {
			t.Fatalf("GetKVAllValues(%s)[%s] = %s (present %v), want %s", short(inst), short(k), short(got), ok, short(want))
		}
		got, found, err := e.p.GetKVValue(fuzzCtx, inst, k)
		if err != nil || !found || got != want {
			t.Fatalf("GetKVValue(%s, %s) = %s, %v, %v; want %s", short(inst), short(k), short(got), found, err, short(want))
		}
	}
}

func (e *fuzzEnv) wantOrchestratorRoundTrip(t *testing.T, item duroxide.WorkItem, delay time.Duration) {
	t.Helper()
	if delay > 0 {
		got, err := e.p.FetchOrchestrationItem(fuzzCtx, time.Hour, 0, nil)
		if err != nil || got != nil {
			t.Fatalf("item enqueued with delay %v is fetchable at once (item %v, error %v)", delay, got != nil, err)
		}
		// visibility is whole server milliseconds, the delay rounded up
		visible := fuzzClock.Add(delay).Add(time.Millisecond)
		if visible.After(maxClock) {
			// miniredis cannot be set that far: check it waits as delayed
			d, err := e.p.GetQueueDepths(fuzzCtx)
			if err != nil || d.TimerQueue != 1 || d.OrchestratorQueue != 0 {
				t.Fatalf("item enqueued with delay %v: queue depths %+v (error %v), want 1 delayed", delay, d, err)
			}
			return
		}
		e.m.SetTime(visible)
	}
	got, err := e.p.FetchOrchestrationItem(fuzzCtx, time.Hour, 0, nil)
	if err != nil || got == nil {
		t.Fatalf("enqueued item not fetchable (item %v, error %v): %s", got != nil, err, describeItem(item))
	}
	if got.Instance != item.InstanceID() || len(got.Messages) != 1 {
		t.Fatalf("fetched instance %s with %d messages, want %s with 1", short(got.Instance), len(got.Messages), short(item.InstanceID()))
	}
	sameItem(t, got.Messages[0], item)
}

func (e *fuzzEnv) wantWorkerRoundTrip(t *testing.T, item duroxide.WorkItem) {
	t.Helper()
	act := deref(item).(duroxide.ActivityExecute)
	tags := duroxide.DefaultOnly()
	if act.Tag != nil {
		tags = duroxide.TagsOnly(*act.Tag)
	}
	var session *duroxide.SessionFetchConfig
	if act.SessionID != nil {
		session = &duroxide.SessionFetchConfig{OwnerID: "fuzz-owner", LockTimeout: time.Hour}
	}
	got, err := e.p.FetchWorkItem(fuzzCtx, time.Hour, 0, session, tags)
	if err != nil || got == nil {
		t.Fatalf("enqueued activity not fetchable (item %v, error %v): %s", got != nil, err, describeItem(item))
	}
	sameItem(t, got.Item, item)
}

func sameItem(t *testing.T, got, want duroxide.WorkItem) {
	t.Helper()
	g, err := duroxide.MarshalWorkItem(got)
	if err != nil {
		t.Fatalf("fetched item cannot be encoded: %v", err)
	}
	w, _ := duroxide.MarshalWorkItem(want)
	if string(g) != string(w) {
		t.Fatalf("fetched item differs from the enqueued one\n got %s\nwant %s", short(string(g)), short(string(w)))
	}
}

// ---------------------------------------------------------------------------
// Tokens

// fuzzLocks are the locks FuzzTokens holds while it tries other tokens: one
// valid and one expired lock of each kind.
type fuzzLocks struct {
	orch, work               string
	orchExpired, workExpired string
}

const tokenInstance = "tok-a"

func (e *fuzzEnv) liveLocks(t *testing.T) fuzzLocks {
	t.Helper()
	var l fuzzLocks
	e.mustEnqueue(t, duroxide.StartOrchestration{Instance: tokenInstance, Orchestration: "O", ExecutionID: 1})
	l.orch = e.mustFetch(t, tokenInstance, time.Hour).LockToken
	e.mustEnqueue(t, duroxide.StartOrchestration{Instance: "tok-b", Orchestration: "O", ExecutionID: 1})
	l.orchExpired = e.mustFetch(t, "tok-b", time.Millisecond).LockToken
	e.mustEnqueue(t, duroxide.ActivityExecute{Instance: tokenInstance, ExecutionID: 1, ID: 1, Name: "A"})
	l.work = e.mustFetchWork(t, time.Hour).LockToken
	e.mustEnqueue(t, duroxide.ActivityExecute{Instance: tokenInstance, ExecutionID: 1, ID: 2, Name: "A"})
	l.workExpired = e.mustFetchWork(t, time.Millisecond).LockToken
	e.m.SetTime(fuzzClock.Add(time.Second)) // the 1ms locks are now expired
	return l
}

// transform derives the token of one call from the fuzzed token and the
// locks: near misses of live tokens and values the token indexes hold; or
// (14) the live token of method's own kind, reported by live.
func (l fuzzLocks) transform(r *fuzzProg, fuzzed string, method int) (tok string, live bool) {
	near := l.orch
	if r.flag() {
		near = l.work
	}
	c := r.pick(15)
	if c == 14 {
		if method <= mRenewOrch {
			return l.orch, true
		}
		return l.work, true
	}
	return l.nearMiss(c, fuzzed, near), false
}

// nearMiss is transform's case c (0..13), live being one of the live tokens.
func (l fuzzLocks) nearMiss(c int, fuzzed, live string) string {
	switch c {
	case 1:
		return l.orch
	case 2:
		return l.work
	case 3:
		return l.orchExpired
	case 4:
		return l.workExpired
	case 5:
		return live + fuzzed
	case 6:
		return fuzzed + live
	case 7:
		return strings.ToUpper(live)
	case 8:
		return live[:len(live)-1]
	case 9:
		return " " + live
	case 10:
		return tokenInstance // otoks maps tokens to instance ids
	case 11:
		return "1" // wtoks maps tokens to item sequence numbers
	case 12:
		return ""
	case 13:
		return live + "\xff"
	}
	return fuzzed
}

// Token methods, in the order callWithToken numbers them.
const (
	mAckOrch = iota
	mAbandonOrch
	mRenewOrch
	mAckWork
	mAbandonWork
	mRenewWork
)

// notLiveFor changes method so that tok is not a valid lock for it: a live
// token goes to the other kind's method, an expired one from abandon (which
// may release an expired lock) to renew.
func (l fuzzLocks) notLiveFor(method int, tok string) int {
	switch {
	case tok == l.orch && method <= mRenewOrch:
		return method + 3
	case tok == l.work && method >= mAckWork:
		return method - 3
	case tok == l.orchExpired && method == mAbandonOrch:
		return mRenewOrch
	case tok == l.workExpired && method == mAbandonWork:
		return mRenewWork
	}
	return method
}

// callWithToken calls one token method. With a live token it passes an
// invalid argument (negative duration, commit with execution id 0,
// ActivityExecute as completion); otherwise valid arguments, or a fuzzed
// duration that may be negative. badArgs reports an invalid argument: the
// rejection may then name it instead of the token.
func (e *fuzzEnv) callWithToken(r *fuzzProg, method int, tok string, live bool) (op string, badArgs bool, err error) {
	var d time.Duration
	if method != mAckOrch && method != mAckWork {
		d = r.duration()
		if live && d >= 0 {
			d = -1 - d
		}
	}
	switch method {
	case mAckOrch:
		c := emptyTurn()
		if live {
			c.ExecutionID = 0
		}
		return opAckOrch, live, e.p.AckOrchestrationItem(fuzzCtx, tok, c)
	case mAbandonOrch:
		return opAbandonOrch, d < 0, e.p.AbandonOrchestrationItem(fuzzCtx, tok, d, r.flag())
	case mRenewOrch:
		return opRenewOrch, d < 0, e.p.RenewOrchestrationItemLock(fuzzCtx, tok, d)
	case mAckWork:
		var completion duroxide.WorkItem
		switch {
		case live:
			completion = duroxide.ActivityExecute{Instance: tokenInstance, ExecutionID: 1, ID: 1}
		case r.flag():
			completion = duroxide.ActivityCompleted{Instance: tokenInstance, ExecutionID: 1, ID: 1, Result: "r"}
		}
		return opAckWork, live, e.p.AckWorkItem(fuzzCtx, tok, completion)
	case mAbandonWork:
		return opAbandonWork, d < 0, e.p.AbandonWorkItem(fuzzCtx, tok, d, r.flag())
	default:
		return opRenewWork, d < 0, e.p.RenewWorkItemLock(fuzzCtx, tok, d)
	}
}

// wantStillValid checks that the live locks survived: renewing them by any
// positive duration (the clock is frozen, so even 1ns, rounded up to 1ms,
// keeps them valid) and then acking them succeeds.
func (l fuzzLocks) wantStillValid(t *testing.T, e *fuzzEnv, r *fuzzProg) {
	t.Helper()
	extend := r.duration()
	if extend <= 0 {
		extend = time.Hour // renewing by 0 legitimately ends the lock now
	}
	if err := e.p.RenewOrchestrationItemLock(fuzzCtx, l.orch, extend); err != nil {
		t.Fatalf("live orchestration lock lost: renew: %v", err)
	}
	if err := e.p.AckOrchestrationItem(fuzzCtx, l.orch, emptyTurn()); err != nil {
		t.Fatalf("live orchestration lock renewed by %v, then ack failed: %v", extend, err)
	}
	if err := e.p.RenewWorkItemLock(fuzzCtx, l.work, extend); err != nil {
		t.Fatalf("live worker lock lost: renew: %v", err)
	}
	if err := e.p.AckWorkItem(fuzzCtx, l.work, duroxide.ActivityCompleted{Instance: tokenInstance, ExecutionID: 1, ID: 1}); err != nil {
		t.Fatalf("live worker lock renewed by %v, then ack failed: %v", extend, err)
	}
}

// ---------------------------------------------------------------------------
// KV

// kvWorld is what FuzzKV wrote: the owner instance, its live KV view and
// history, and whether it has a record.
type kvWorld struct {
	owner   string
	record  bool
	view    map[string]string
	history []duroxide.Event
}

// writeKV runs up to two turns of KV operations on owner (the first ends
// Running or Completed, so the second writes a delta over a store or over a
// delta). A turn the provider rejects (keys or values over the limits, not
// UTF-8) must be a clean rejection and ends the setup.
func (e *fuzzEnv) writeKV(t *testing.T, r *fuzzProg, owner string) *kvWorld {
	t.Helper()
	w := &kvWorld{owner: owner, view: map[string]string{}}
	turns := r.pick(3)
	if turns == 0 {
		return w
	}
	e.mustEnqueue(t, duroxide.StartOrchestration{Instance: owner, Orchestration: "O", ExecutionID: 1})
	token := e.mustFetch(t, owner, time.Hour).LockToken
	for turn := 0; turn < turns; turn++ {
		if turn > 0 {
			e.mustEnqueue(t, duroxide.ExternalRaised{Instance: owner, Name: "e"})
			token = e.mustFetch(t, owner, time.Hour).LockToken
		}
		status := "Running"
		if r.flag() {
			status = "Completed"
		}
		var delta []duroxide.Event
		next := uint64(len(w.history)) + 1
		for n := r.pick(6); n > 0; n-- {
			var kind duroxide.EventKind
			switch r.pick(3) {
			case 0:
				kind = duroxide.KeyValueSetEvent{Key: r.str(), Value: r.str(), LastUpdatedAtMs: r.u64()}
			case 1:
				kind = duroxide.KeyValueClearedEvent{Key: r.str()}
			default:
				kind = duroxide.KeyValuesClearedEvent{}
			}
			delta = append(delta, mkEvent(next, owner, 1, kind))
			next++
		}
		c := duroxide.OrchestrationCommit{ExecutionID: 1, HistoryDelta: delta,
			Metadata: duroxide.ExecutionMetadata{Status: status, OrchestrationName: "O"}}
		v := ackVerdict(c, uint64(len(w.history)))
		before := e.snapshot(t)
		err := e.p.AckOrchestrationItem(fuzzCtx, token, c)
		if e.judge(t, v, opAckOrch, err, before, describeEvents(delta)) {
			break
		}
		w.record = true
		w.history = append(w.history, delta...)
		applyKV(w.view, delta)
	}
	return w
}

// queryInstance picks the instance id of one query: the owner, near misses
// of it, the raw fuzzed id, "" or a pool string.
func (w *kvWorld) queryInstance(r *fuzzProg, fuzzed string) string {
	o := w.owner
	switch r.pick(10) {
	case 1:
		return ""
	case 2:
		return o + ":"
	case 3:
		return "{" + o + "}"
	case 4:
		return o + " "
	case 5:
		return strings.ToUpper(o)
	case 6:
		return o[:len(o)-1]
	case 7:
		return r.str()
	case 8:
		return "\xff" + o
	case 9:
		return fuzzed
	}
	return o
}

// queryKey picks the key of one query: the fuzzed key, near misses, a key
// the owner holds or a pool string.
func (w *kvWorld) queryKey(r *fuzzProg, key string) string {
	switch r.pick(7) {
	case 1:
		return ""
	case 2:
		return key + ":"
	case 3:
		if key != "" {
			return key[:len(key)-1]
		}
	case 4:
		return r.str()
	case 5:
		keys := make([]string, 0, len(w.view))
		for k := range w.view {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if i := r.pick(8); i < len(keys) {
			return keys[i]
		}
	case 6:
		return strings.ToUpper(key)
	}
	return key
}

// check runs every read-only call for (inst, key) against the world.
func (w *kvWorld) check(t *testing.T, e *fuzzEnv, inst, key string) {
	t.Helper()
	value, found, err := e.p.GetKVValue(fuzzCtx, inst, key)
	all, errAll := e.p.GetKVAllValues(fuzzCtx, inst)
	events, errRead := e.p.Read(fuzzCtx, inst)
	status, errStatus := e.p.GetCustomStatus(fuzzCtx, inst, 0)
	stats, errStats := e.p.GetInstanceStats(fuzzCtx, inst)
	if inst == "" {
		wantPermanent(t, opKVValue, err)
		wantPermanent(t, opKVAll, errAll)
		wantPermanent(t, opRead, errRead)
		wantPermanent(t, opStatus, errStatus)
		wantPermanent(t, opStats, errStats)
		return
	}
	for _, x := range []struct {
		op  string
		err error
	}{{opKVValue, err}, {opKVAll, errAll}, {opRead, errRead}, {opStatus, errStatus}, {opStats, errStats}} {
		if x.err != nil {
			t.Fatalf("%s(%s, %s) failed: %v", x.op, short(inst), short(key), x.err)
		}
	}
	view, history := map[string]string{}, []duroxide.Event(nil)
	if inst == w.owner {
		view, history = w.view, w.history
	}
	want, wantFound := view[key]
	if found != wantFound || value != want {
		t.Fatalf("GetKVValue(%s, %s) = %s, %v; want %s, %v", short(inst), short(key), short(value), found, short(want), wantFound)
	}
	if len(all) != len(view) {
		t.Fatalf("GetKVAllValues(%s): %d keys, want %d", short(inst), len(all), len(view))
	}
	for k, v := range view {
		if all[k] != v {
			t.Fatalf("GetKVAllValues(%s)[%s] = %s, want %s", short(inst), short(k), short(all[k]), short(v))
		}
	}
	sameEvents(t, "Read("+short(inst)+")", events, history)
	if status != nil {
		t.Fatalf("GetCustomStatus(%s) = %s, want nil", short(inst), describeStatus(status))
	}
	switch {
	case inst != w.owner || !w.record:
		if stats != nil {
			t.Fatalf("GetInstanceStats(%s) = %+v for an instance without record", short(inst), *stats)
		}
	case stats == nil:
		t.Fatalf("GetInstanceStats(%s) = nil for an existing instance", short(inst))
	case stats.KVUserKeyCount != uint64(len(w.view)):
		t.Fatalf("GetInstanceStats(%s).KVUserKeyCount = %d, want %d", short(inst), stats.KVUserKeyCount, len(w.view))
	}
}

// ---------------------------------------------------------------------------
// Input decoding

// Pool layout: every string field is picked from the pool by one byte of the
// program (modulo poolSize).
const (
	pA         = iota // first string argument of the target (usually an instance id)
	pB                // second string argument; also the base of the sized strings
	pC                // third string argument ("" or fixed when the target has two)
	pEmpty            // ""
	pBraces           // a Redis Cluster hash tag inside a value
	pColons           // the key separator
	pSpaces           // leading, inner and trailing spaces
	pUnicode          // valid multi-byte UTF-8
	pBadUTF8          // not UTF-8
	pJSON             // JSON-breaking quotes, braces and escapes
	pControl          // control characters and characters JSON encoders escape
	pKeyMax           // pB filled to MaxKVKeyBytes
	pKeyOver          // pB filled to MaxKVKeyBytes+1
	pValueMax         // pB filled to MaxKVValueBytes
	pValueOver        // pB filled to MaxKVValueBytes+1
	pMiB              // pB filled to 1 MiB
	poolSize
)

var poolConstants = [...]string{
	pEmpty:   "",
	pBraces:  "{x}",
	pColons:  "a:b::c:",
	pSpaces:  " a  b ",
	pUnicode: "日本語 ✓ 🎉",
	pBadUTF8: "\xff\xfe\xc3",
	pJSON:    `"},{"x":"\u0000\\`,
	pControl: "\x00\n\t\r\x1f\u2028<>&",
}

var poolSizes = [...]int{
	pKeyMax:    redisprovider.MaxKVKeyBytes,
	pKeyOver:   redisprovider.MaxKVKeyBytes + 1,
	pValueMax:  redisprovider.MaxKVValueBytes,
	pValueOver: redisprovider.MaxKVValueBytes + 1,
	pMiB:       1 << 20,
}

// fuzzU64s are the values a one-byte u64 in 0x80..0xfe selects.
var fuzzU64s = []uint64{
	0, 1, 2, 1<<31 - 1, 1 << 32, 1<<53 - 1, 1 << 53, 1<<53 + 1,
	999_999_999_999_999, 1_000_000_000_000_000, 1<<63 - 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64,
}

// fuzzDurations are the durations duration() selects; the last three are
// negative.
var fuzzDurations = []time.Duration{0, 1, time.Millisecond - 1, time.Millisecond, 1500 * time.Millisecond, time.Hour,
	24 * 365 * time.Hour, math.MaxInt64, -1, -time.Millisecond, math.MinInt64}

// fuzzProg decodes a fuzz program: each choice reads one byte (0 when the
// program is exhausted), a u64 one byte or nine.
type fuzzProg struct {
	b     []byte
	pool  [poolSize]string
	sized [poolSize]bool

	// header defaults of the events the program builds
	inst string
	exec uint64
}

func newFuzzProg(data []byte, a, b, c string) *fuzzProg {
	r := &fuzzProg{b: data, inst: usableID(a), exec: 1}
	r.pool[pA], r.pool[pB], r.pool[pC] = a, b, c
	for i := pEmpty; i < pKeyMax; i++ {
		r.pool[i] = poolConstants[i]
	}
	return r
}

func (r *fuzzProg) more() bool { return len(r.b) > 0 }

func (r *fuzzProg) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzProg) pick(n int) int { return int(r.byte()) % n }

func (r *fuzzProg) flag() bool { return r.byte()&1 == 1 }

// u64: 0x00..0x7f is the value itself, 0x80..0xfe one of fuzzU64s, 0xff the
// next eight bytes, big-endian.
func (r *fuzzProg) u64() uint64 {
	switch c := r.byte(); {
	case c < 0x80:
		return uint64(c)
	case c < 0xff:
		return fuzzU64s[int(c-0x80)%len(fuzzU64s)]
	}
	var buf [8]byte
	for i := range buf {
		buf[i] = r.byte()
	}
	return binary.BigEndian.Uint64(buf[:])
}

// str picks a pool string.
func (r *fuzzProg) str() string { return r.poolString(r.pick(poolSize)) }

// poolString returns pool string i; the sized ones are built on first use.
func (r *fuzzProg) poolString(i int) string {
	if i >= pKeyMax && !r.sized[i] {
		r.pool[i] = fill(r.pool[pB], poolSizes[i])
		r.sized[i] = true
	}
	return r.pool[i]
}

// fill repeats s (or "x") to exactly n bytes; the cut may split a rune.
func fill(s string, n int) string {
	if s == "" {
		s = "x"
	}
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// optStr: an even byte is nil, an odd one pool string byte/2.
func (r *fuzzProg) optStr() *string {
	c := r.byte()
	if c&1 == 0 {
		return nil
	}
	s := r.poolString(int(c>>1) % poolSize)
	return &s
}

func (r *fuzzProg) optU64() *uint64 {
	if !r.flag() {
		return nil
	}
	v := r.u64()
	return &v
}

func (r *fuzzProg) duration() time.Duration { return fuzzDurations[r.pick(len(fuzzDurations))] }

// Execution id modes: 0..5 execution 1, 6 execution 2, 7 a u64 follows.
const (
	execOne = 0
	execTwo = 6
	execRaw = 7
)

func (r *fuzzProg) executionID() uint64 {
	switch r.pick(8) {
	case execTwo:
		return 2
	case execRaw:
		return r.u64()
	}
	return 1
}

// Event id modes, relative to the previous id: 0..4 next, 5 the same
// (duplicate), 6 one less (decreasing; wraps to 2^64-1 after 0), 7 a u64
// follows.
const (
	idNext = 0
	idDup  = 5
	idDec  = 6
	idRaw  = 7
)

func (r *fuzzProg) eventID(prev uint64) uint64 {
	switch r.pick(8) {
	case idDup:
		return prev
	case idDec:
		return prev - 1
	case idRaw:
		return r.u64()
	}
	return prev + 1
}

// Header flags of an event: each set bit reads that field from the program
// instead of using the default.
const (
	hSource   = 1 << iota // SourceEventID: u64 (default nil)
	hInstance             // InstanceID: str (default the target's instance)
	hExec                 // ExecutionID: u64 (default the commit's)
	hTime                 // TimestampMs: u64 (default fuzzTimestamp)
	hVersion              // DuroxideVersion: str (default current)
)

// event reads: id mode [u64], header flags [fields], kind [fields].
func (r *fuzzProg) event(prev uint64) duroxide.Event {
	ev := duroxide.Event{EventID: r.eventID(prev), InstanceID: r.inst, ExecutionID: r.exec,
		TimestampMs: fuzzTimestamp, DuroxideVersion: duroxide.CurrentDuroxideVersion}
	flags := r.byte()
	if flags&hSource != 0 {
		v := r.u64()
		ev.SourceEventID = &v
	}
	if flags&hInstance != 0 {
		ev.InstanceID = r.str()
	}
	if flags&hExec != 0 {
		ev.ExecutionID = r.u64()
	}
	if flags&hTime != 0 {
		ev.TimestampMs = r.u64()
	}
	if flags&hVersion != 0 {
		ev.DuroxideVersion = r.str()
	}
	ev.Kind = r.eventKind()
	return ev
}

func (r *fuzzProg) events(n int, prev uint64) []duroxide.Event {
	var out []duroxide.Event
	for ; n > 0; n-- {
		ev := r.event(prev)
		prev = ev.EventID
		out = append(out, ev)
	}
	return out
}

// Event kinds: 0..25 in duroxide's declaration order, 26 nil, 27 a typed nil
// pointer, 28..31 pointer forms of KeyValueSet, KeyValueCleared,
// KeyValuesCleared and CustomStatusUpdated.
const (
	kStarted         = 0
	kCompleted       = 1
	kFailed          = 2
	kActScheduled    = 3
	kActCompleted    = 4
	kExternal        = 10
	kCustomStatus    = 22
	kKVSet           = 23
	kKVCleared       = 24
	kKVAllCleared    = 25
	kNil             = 26
	kNilPtr          = 27
	kKVSetPtr        = 28
	kKVClearedPtr    = 29
	kKVAllClearedPtr = 30
	kCustomStatusPtr = 31
)

func (r *fuzzProg) eventKind() duroxide.EventKind {
	switch r.pick(32) {
	case 0:
		return duroxide.OrchestrationStartedEvent{Name: r.str(), Version: r.str(), Input: r.str(),
			ParentInstance: r.optStr(), ParentID: r.optU64(), CarryForwardEvents: r.optPairs(), InitialCustomStatus: r.optStr()}
	case 1:
		return duroxide.OrchestrationCompletedEvent{Output: r.str()}
	case 2:
		return duroxide.OrchestrationFailedEvent{Details: r.details()}
	case 3:
		return duroxide.ActivityScheduledEvent{Name: r.str(), Input: r.str(), SessionID: r.optStr(), Tag: r.optStr()}
	case 4:
		return duroxide.ActivityCompletedEvent{Result: r.str()}
	case 5:
		return duroxide.ActivityFailedEvent{Details: r.details()}
	case 6:
		return duroxide.ActivityCancelRequestedEvent{Reason: r.str()}
	case 7:
		return duroxide.TimerCreatedEvent{FireAtMs: r.u64()}
	case 8:
		return duroxide.TimerFiredEvent{FireAtMs: r.u64()}
	case 9:
		return duroxide.ExternalSubscribedEvent{Name: r.str()}
	case 10:
		return duroxide.ExternalEventEvent{Name: r.str(), Data: r.str()}
	case 11:
		return duroxide.OrchestrationChainedEvent{Name: r.str(), Instance: r.str(), Input: r.str()}
	case 12:
		return duroxide.SubOrchestrationScheduledEvent{Name: r.str(), Instance: r.str(), Input: r.str()}
	case 13:
		return duroxide.SubOrchestrationCompletedEvent{Result: r.str()}
	case 14:
		return duroxide.SubOrchestrationFailedEvent{Details: r.details()}
	case 15:
		return duroxide.SubOrchestrationCancelRequestedEvent{Reason: r.str()}
	case 16:
		return duroxide.OrchestrationContinuedAsNewEvent{Input: r.str()}
	case 17:
		return duroxide.OrchestrationCancelRequestedEvent{Reason: r.str()}
	case 18:
		return duroxide.ExternalSubscribedCancelledEvent{Reason: r.str()}
	case 19:
		return duroxide.QueueSubscribedEvent{Name: r.str()}
	case 20:
		return duroxide.QueueEventDeliveredEvent{Name: r.str(), Data: r.str()}
	case 21:
		return duroxide.QueueSubscriptionCancelledEvent{Reason: r.str()}
	case 22:
		return duroxide.CustomStatusUpdatedEvent{Status: r.optStr()}
	case 23:
		return duroxide.KeyValueSetEvent{Key: r.str(), Value: r.str(), LastUpdatedAtMs: r.u64()}
	case 24:
		return duroxide.KeyValueClearedEvent{Key: r.str()}
	case 25:
		return duroxide.KeyValuesClearedEvent{}
	case 26:
		return nil
	case 27:
		return (*duroxide.OrchestrationCompletedEvent)(nil)
	case 28:
		return &duroxide.KeyValueSetEvent{Key: r.str(), Value: r.str(), LastUpdatedAtMs: r.u64()}
	case 29:
		return &duroxide.KeyValueClearedEvent{Key: r.str()}
	case 30:
		return &duroxide.KeyValuesClearedEvent{}
	default:
		return &duroxide.CustomStatusUpdatedEvent{Status: r.optStr()}
	}
}

// pairs reads a count (0..2) and that many (name, data) pairs.
func (r *fuzzProg) pairs() [][2]string {
	var out [][2]string
	for n := r.pick(3); n > 0; n-- {
		out = append(out, [2]string{r.str(), r.str()})
	}
	return out
}

// optPairs: a clear flag is nil, else a pointer to pairs().
func (r *fuzzProg) optPairs() *[][2]string {
	if !r.flag() {
		return nil
	}
	p := r.pairs()
	return &p
}

// Error details variants: 0 ApplicationFailure, 1 Application Cancelled, 2
// Infrastructure, 3 Configuration, 4 Poison, 5 none set (invalid), 6 two set
// (invalid), 7 unknown application kind (invalid).
const (
	dAppFailure = 0
	dEmpty      = 5
)

func (r *fuzzProg) details() duroxide.ErrorDetails {
	switch r.pick(8) {
	case 0:
		return duroxide.ApplicationFailure(r.str())
	case 1:
		return duroxide.ErrorDetails{Application: &duroxide.ApplicationError{
			Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorCancelled, Reason: r.str()}, Message: r.str(), Retryable: r.flag()}}
	case 2:
		return duroxide.ErrorDetails{Infrastructure: &duroxide.InfrastructureError{Operation: r.str(), Message: r.str(), Retryable: r.flag()}}
	case 3:
		return duroxide.ErrorDetails{Configuration: &duroxide.ConfigurationError{
			Kind: duroxide.ConfigErrorNondeterminism, Resource: r.str(), Message: r.optStr()}}
	case 4:
		p := &duroxide.PoisonError{AttemptCount: uint32(r.u64()), MaxAttempts: uint32(r.u64()), Message: r.str()}
		switch r.pick(3) {
		case 0:
			p.MessageType.Orchestration = &duroxide.PoisonOrchestration{Instance: r.str(), ExecutionID: r.u64()}
		case 1:
			p.MessageType.Activity = &duroxide.PoisonActivity{Instance: r.str(), ExecutionID: r.u64(), ActivityName: r.str(), ActivityID: r.u64()}
		default:
			p.MessageType.FailedDeserialization = &duroxide.PoisonFailedDeserialization{Instance: r.str(), ExecutionID: r.u64(), Error: r.str()}
		}
		return duroxide.ErrorDetails{Poison: p}
	case 5:
		return duroxide.ErrorDetails{}
	case 6:
		d := duroxide.ApplicationFailure(r.str())
		d.Infrastructure = &duroxide.InfrastructureError{Operation: "x"}
		return d
	default:
		return duroxide.ErrorDetails{Application: &duroxide.ApplicationError{Kind: duroxide.AppErrorKind{Variant: "Bogus"}}}
	}
}

// Work item variants: 0..10 in duroxide's declaration order, 11 nil, 12 a
// typed nil pointer, 13..15 the pointer form of the variant that follows.
const (
	wStart        = 0
	wActivity     = 1
	wActCompleted = 2
	wActFailed    = 3
	wTimer        = 4
	wExternal     = 5
	wSubFailed    = 7
	wCancel       = 8
	wCAN          = 9
	wQueue        = 10
	wNil          = 11
	wNilPtr       = 12
	wPtr          = 13
)

func (r *fuzzProg) workItem() duroxide.WorkItem {
	switch v := r.pick(16); {
	case v == wNil:
		return nil
	case v == wNilPtr:
		if r.flag() {
			return (*duroxide.ActivityExecute)(nil)
		}
		return (*duroxide.StartOrchestration)(nil)
	case v >= wPtr:
		return pointerTo(r.variant(r.pick(11)))
	default:
		return r.variant(v)
	}
}

// variant reads the fields of work item variant v (0..10), in declaration
// order.
func (r *fuzzProg) variant(v int) duroxide.WorkItem {
	switch v {
	case 0:
		return duroxide.StartOrchestration{Instance: r.str(), Orchestration: r.str(), Input: r.str(),
			Version: r.optStr(), ParentInstance: r.optStr(), ParentID: r.optU64(), ExecutionID: r.u64()}
	case 1:
		return duroxide.ActivityExecute{Instance: r.str(), ExecutionID: r.u64(), ID: r.u64(), Name: r.str(), Input: r.str(),
			SessionID: r.optStr(), Tag: r.optStr()}
	case 2:
		return duroxide.ActivityCompleted{Instance: r.str(), ExecutionID: r.u64(), ID: r.u64(), Result: r.str()}
	case 3:
		return duroxide.ActivityFailed{Instance: r.str(), ExecutionID: r.u64(), ID: r.u64(), Details: r.details()}
	case 4:
		return duroxide.TimerFired{Instance: r.str(), ExecutionID: r.u64(), ID: r.u64(), FireAtMs: r.u64()}
	case 5:
		return duroxide.ExternalRaised{Instance: r.str(), Name: r.str(), Data: r.str()}
	case 6:
		return duroxide.SubOrchCompleted{ParentInstance: r.str(), ParentExecutionID: r.u64(), ParentID: r.u64(), Result: r.str()}
	case 7:
		return duroxide.SubOrchFailed{ParentInstance: r.str(), ParentExecutionID: r.u64(), ParentID: r.u64(), Details: r.details()}
	case 8:
		return duroxide.CancelInstance{Instance: r.str(), Reason: r.str()}
	case 9:
		return duroxide.ContinueAsNew{Instance: r.str(), Orchestration: r.str(), Input: r.str(), Version: r.optStr(),
			CarryForwardEvents: r.pairs(), InitialCustomStatus: r.optStr()}
	default:
		return duroxide.QueueMessage{Instance: r.str(), Name: r.str(), Data: r.str()}
	}
}

// pointerTo returns a pointer to a copy of a value work item.
func pointerTo(item duroxide.WorkItem) duroxide.WorkItem {
	p := reflect.New(reflect.TypeOf(item))
	p.Elem().Set(reflect.ValueOf(item))
	return p.Interface().(duroxide.WorkItem)
}

// Metadata fields: status 0 "", 1 Running, 2 Completed, 3 Failed, 4
// ContinuedAsNew, 5 a pool string; output optStr; name 0 "", 1 "O", 2 str;
// version 0 "", 1 "1.0.0", 2 str; parent 0 "", 1 str; pinned 0 nil, 1
// 0.1.27, 2 1.2.3-alpha.1+build.5, 3 a pool string parsed as semver.
var statuses = []string{"", "Running", "Completed", "Failed", "ContinuedAsNew"}

func (r *fuzzProg) metadata() duroxide.ExecutionMetadata {
	var m duroxide.ExecutionMetadata
	if s := r.pick(6); s < len(statuses) {
		m.Status = statuses[s]
	} else {
		m.Status = r.str()
	}
	m.Output = r.optStr()
	m.OrchestrationName = r.choose("", "O")
	m.OrchestrationVersion = r.choose("", "1.0.0")
	if r.flag() {
		m.ParentInstanceID = r.str()
	}
	switch r.pick(4) {
	case 1:
		m.PinnedDuroxideVersion = semver.MustParse(duroxide.CurrentDuroxideVersion)
	case 2:
		m.PinnedDuroxideVersion = semver.MustParse("1.2.3-alpha.1+build.5")
	case 3:
		m.PinnedDuroxideVersion, _ = semver.NewVersion(r.str())
	}
	return m
}

// choose reads 0 (a), 1 (b) or 2 (a pool string).
func (r *fuzzProg) choose(a, b string) string {
	switch r.pick(3) {
	case 0:
		return a
	case 1:
		return b
	}
	return r.str()
}

// commit reads: execution id, event count (0..6) and events, then 0..2
// worker items, 0..2 orchestrator items, 0..2 cancelled activities
// (instance, execution, activity) and the metadata.
func (r *fuzzProg) commit(inst string, storedMax uint64) duroxide.OrchestrationCommit {
	var c duroxide.OrchestrationCommit
	c.ExecutionID = r.executionID()
	r.inst, r.exec = inst, c.ExecutionID
	c.HistoryDelta = r.events(r.pick(7), storedMax)
	for n := r.pick(3); n > 0; n-- {
		c.WorkerItems = append(c.WorkerItems, r.workItem())
	}
	for n := r.pick(3); n > 0; n-- {
		c.OrchestratorItems = append(c.OrchestratorItems, r.workItem())
	}
	for n := r.pick(3); n > 0; n-- {
		c.CancelledActivities = append(c.CancelledActivities,
			duroxide.ScheduledActivityIdentifier{Instance: r.str(), ExecutionID: r.u64(), ActivityID: r.u64()})
	}
	c.Metadata = r.metadata()
	return c
}

// ---------------------------------------------------------------------------
// Descriptions for failure messages

// short quotes s, cut to a readable length.
func short(s string) string {
	const max = 160
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s...(%d bytes)", strconv.Quote(s[:max]), len(s))
}

func describeItem(item duroxide.WorkItem) string {
	if isNil(item) {
		return fmt.Sprintf("%T(nil)", item)
	}
	b, err := duroxide.MarshalWorkItem(item)
	if err != nil {
		return fmt.Sprintf("%T (unencodable: %v)", item, err)
	}
	return fmt.Sprintf("%T %s", item, short(string(b)))
}

func describeEvents(events []duroxide.Event) string {
	var parts []string
	for _, ev := range events {
		b, err := ev.MarshalJSON()
		if err != nil {
			parts = append(parts, fmt.Sprintf("{id %d kind %T: unencodable: %v}", ev.EventID, ev.Kind, err))
			continue
		}
		parts = append(parts, short(string(b)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func describeCommit(c duroxide.OrchestrationCommit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "execution %d\n  events %s", c.ExecutionID, describeEvents(c.HistoryDelta))
	for _, item := range c.WorkerItems {
		fmt.Fprintf(&b, "\n  worker %s", describeItem(item))
	}
	for _, item := range c.OrchestratorItems {
		fmt.Fprintf(&b, "\n  orchestrator %s", describeItem(item))
	}
	for _, x := range c.CancelledActivities {
		fmt.Fprintf(&b, "\n  cancel %s/%d/%d", short(x.Instance), x.ExecutionID, x.ActivityID)
	}
	m := c.Metadata
	fmt.Fprintf(&b, "\n  metadata status %s output %v name %s version %s parent %s pinned %v",
		short(m.Status), m.Output != nil, short(m.OrchestrationName), short(m.OrchestrationVersion), short(m.ParentInstanceID), m.PinnedDuroxideVersion)
	return b.String()
}

func describeStatus(cs *duroxide.CustomStatus) string {
	switch {
	case cs == nil:
		return "nil"
	case cs.Status == nil:
		return fmt.Sprintf("{cleared, version %d}", cs.Version)
	}
	return fmt.Sprintf("{%s, version %d}", short(*cs.Status), cs.Version)
}

// ---------------------------------------------------------------------------
// Seed corpora

// raw is a u64 written in full (0xff and eight bytes) by prog.
type raw uint64

// prog assembles a fuzz program: ints are bytes, raw values full u64s,
// slices are flattened.
func prog(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			b = append(b, byte(v))
		case raw:
			b = append(b, 0xff)
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case []any:
			b = append(b, prog(v...)...)
		default:
			panic(fmt.Sprintf("prog: unsupported part %T", p))
		}
	}
	return b
}

// some encodes a present optional string (pool index p); none an absent one.
func some(p int) int { return 2*p + 1 }

const none = 0

// ev encodes one event with default header: id is an id mode or a raw id.
func ev(id any, kind int, fields ...any) []any {
	out := []any{id}
	if r, ok := id.(raw); ok {
		out = []any{idRaw, r}
	}
	return append(append(out, 0, kind), fields...)
}

// Fixed instance ids the seeds use.
const (
	idBraces  = "a{b}c"
	idColons  = "x:1:h:2"
	idSpaces  = " inst ance "
	idUnicode = "日本語-✓"
	idBadUTF8 = "bad\xff\xfeid"
	idTag     = "{fuzz}:i:x"
)

type enqueueSeed struct {
	instance, payload string
	delay             int64
	prog              []byte
}

func enqueueSeeds() []enqueueSeed {
	const orch, work = 0, 1
	start := func(q int) []byte {
		return prog(q, wStart, pA, pB, pB, none, none, none, 1)
	}
	activity := func(q int, session, tag int) []byte {
		return prog(q, wActivity, pA, 1, 2, pB, pB, session, tag)
	}
	return []enqueueSeed{
		// ids with braces, colons, spaces, unicode, invalid UTF-8, empty
		{idBraces, "in", 0, start(orch)},
		{"{", "in", 0, start(orch)},
		{"}", "in", 0, start(orch)},
		{idColons, "in", 0, start(orch)},
		{idSpaces, "in", 0, start(orch)},
		{idUnicode, "in", 0, start(orch)},
		{idTag, "in", 0, start(orch)},
		{idBadUTF8, "in", 0, start(orch)},
		{"", "in", 0, start(orch)},
		{idBraces, "in", 0, activity(work, none, none)},
		{idUnicode, "in", 0, activity(work, some(pColons), some(pUnicode))},
		{"", "in", 0, activity(work, none, none)},
		{idBadUTF8, "in", 0, activity(work, none, none)},
		// empty session id and empty tag; invalid UTF-8 tag
		{"i", "in", 0, activity(work, some(pEmpty), some(pEmpty))},
		{"i", "in", 0, activity(work, some(pBraces), some(pBadUTF8))},
		// wrong queues, nil, typed nil, pointer forms
		{"i", "in", 0, start(work)},
		{"i", "in", 0, activity(orch, none, none)},
		{"i", "", 0, prog(orch, wNil)},
		{"i", "", 0, prog(work, wNil)},
		{"i", "", 0, prog(orch, wNilPtr, 0)},
		{"i", "", 0, prog(work, wNilPtr, 1)},
		{"i", "in", 0, prog(orch, wPtr, wStart, pA, pB, pB, none, none, none, 1)},
		{"i", "in", 0, prog(work, wPtr, wActivity, pA, 1, 2, pB, pB, none, none)},
		{"i", "in", 0, prog(orch, wPtr, wActivity, pA, 1, 2, pB, pB, none, none)},
		// every orchestrator variant, JSON-breaking and control payloads
		{"i", `"}{\`, 0, prog(orch, wActCompleted, pA, 1, 2, pB)},
		{"i", "boom", 0, prog(orch, wActFailed, pA, 1, 2, dAppFailure, pB)},
		{"i", "boom", 0, prog(orch, wActFailed, pA, 1, 2, dEmpty)},
		{"i", "x", 0, prog(orch, wTimer, pA, 1, 2, raw(fuzzTimestamp))},
		{"i", "data", 0, prog(orch, wExternal, pA, pControl, pJSON)},
		{"i", "r", 0, prog(orch, 6, pA, 1, 2, pB)},
		{"i", "boom", 0, prog(orch, wSubFailed, pA, 1, 2, 4, pB, 3, 4, 2, pA, 1, pB)},
		{"i", "why", 0, prog(orch, wCancel, pA, pB)},
		{"i", "in", 0, prog(orch, wCAN, pA, pB, pB, some(pUnicode), 2, pColons, pJSON, pEmpty, pUnicode, some(pB))},
		{idUnicode, "data", 0, prog(orch, wQueue, pA, pB, pB)},
		{"", "data", 0, prog(orch, wQueue, pA, pB, pB)},
		// delays: none, sub-millisecond, seconds, negative, the largest
		{"i", "in", 1, start(orch)},
		{"i", "in", int64(1500 * time.Millisecond), start(orch)},
		{"i", "in", -1, start(orch)},
		{"i", "in", math.MinInt64, start(orch)},
		{"i", "in", math.MaxInt64 - 999_999, start(orch)},
		// (delays within 1ms of MaxInt64: testdata/fuzz/FuzzEnqueue)
		// huge and zero ids
		{"i", "x", 0, prog(orch, wTimer, pA, raw(math.MaxUint64), raw(math.MaxUint64), raw(math.MaxUint64))},
		{"i", "x", 0, prog(orch, wTimer, pA, 0, 0, 0)},
		{"i", "x", 0, prog(work, wActivity, pA, raw(math.MaxUint64), raw(1<<63), pB, pB, none, none)},
		{"i", "x", 0, prog(orch, wStart, pA, pB, pB, none, some(pA), 1, raw(math.MaxUint64), raw(math.MaxUint64))},
		// oversized payloads
		{"i", "payload", 0, prog(orch, wStart, pA, pB, pMiB, none, none, none, 1)},
		{"i", "v", 0, prog(orch, wExternal, pA, pValueOver, pMiB)},
		{"i", "é", 0, prog(orch, wExternal, pA, pB, pValueOver)}, // the cut splits a rune
		{"i", "v", 0, prog(work, wActivity, pA, 1, 2, pB, pMiB, some(pKeyOver), some(pKeyMax))},
		{"i", "in", 0, prog(orch, wStart, pMiB, pB, pB, none, none, none, 1)}, // 1 MiB instance id
	}
}

type ackSeed struct {
	instance, s1, s2 string
	prog             []byte
}

func ackSeeds() []ackSeed {
	started := ev(idNext, kStarted, pA, pB, pC, none, 0, 0, none)
	scheduled := ev(idNext, kActScheduled, pB, pC, none, none)
	activity := []any{wActivity, pA, 1, 2, pB, pC, none, none}
	// metadata: status, output, name, version, parent, pinned
	named := []any{1, none, 1, 1, 0, 1}
	return []ackSeed{
		// a normal first turn, for hostile instance ids
		{idBraces, "A", "in", prog(0, execOne, 2, started, scheduled, 1, activity, 0, 0, named)},
		{idColons, "A", "in", prog(0, execOne, 2, started, scheduled, 1, activity, 0, 0, named)},
		{idSpaces, "A", "in", prog(0, execOne, 2, started, scheduled, 1, activity, 0, 0, named)},
		{idUnicode, "A", "in", prog(0, execOne, 2, started, scheduled, 1, activity, 0, 0, named)},
		{idTag, "A", "in", prog(0, execOne, 1, started, 0, 0, 0, named)},
		{idBadUTF8, "A", "in", prog(0, execOne, 1, started, 0, 0, 0, named)},
		{"", "A", "in", prog(0, execOne, 1, started, 0, 0, 0, named)},
		// a turn without name (no record) and on another execution
		{"i", "A", "in", prog(0, execOne, 1, scheduled, 0, 0, 0)},
		{"i", "A", "in", prog(0, execTwo, 1, started, 0, 0, 0, named)},
		// event ids: zero, duplicate, decreasing, duplicate of stored history,
		// huge (2^64-2, 2^64-1), wrapping below zero
		{"i", "A", "in", prog(0, execOne, 1, ev(raw(0), kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, started, ev(idDup, kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 3, started, scheduled, ev(idDec, kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(2, execOne, 1, ev(raw(2), kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(2, execOne, 1, ev(raw(1), kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(2, execOne, 1, ev(idNext, kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(1, execOne, 2, ev(raw(math.MaxUint64-1), kCompleted, pB), ev(idNext, kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, ev(raw(math.MaxUint64), kCompleted, pB), ev(idNext, kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, ev(raw(1<<53), kCompleted, pB), ev(raw(1<<53+1), kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, ev(raw(10), kCompleted, pB), ev(raw(9), kCompleted, pB), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, ev(raw(999_999_999_999_999), kCompleted, pB), ev(raw(1_000_000_000_000_000), kCompleted, pB), 0, 0, 0, named)},
		// execution ids: zero and 2^64-1
		{"i", "A", "in", prog(0, execRaw, raw(0), 1, started, 0, 0, 0, named)},
		{"i", "A", "in", prog(2, execRaw, raw(1<<63-1), 1, started, 0, 0, 0, named)},
		// (execution ids and timer fire times >= 2^63: testdata/fuzz/FuzzAckCommit)
		// JSON-breaking, control and invalid UTF-8 strings in events
		{"i", `"},{"type":"x"}`, "\x00\n", prog(0, execOne, 2, started, ev(idNext, kExternal, pB, pC), 0, 0, 0, named)},
		{"i", "ok", "\xff", prog(0, execOne, 2, started, ev(idNext, kExternal, pB, pC), 0, 0, 0, named)},
		{"i", "ok", "x", prog(0, execOne, 1, []any{idNext, hInstance | hVersion, pBadUTF8, pA, kCompleted, pB}, 0, 0, 0, named)},
		{"i", "ok", "x", prog(0, execOne, 1, []any{idNext, hSource | hExec | hTime, raw(math.MaxUint64), raw(math.MaxUint64), raw(math.MaxUint64), kCompleted, pB}, 0, 0, 0, named)},
		// nil and typed-nil kinds, unencodable details
		{"i", "A", "in", prog(0, execOne, 2, started, ev(idNext, kNil), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, started, ev(idNext, kNilPtr), 0, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 2, started, ev(idNext, kFailed, dEmpty), 0, 0, 0, named)},
		// KV: at and over the key and value limits, pointer kinds, clears
		{"i", "k", "v", prog(0, execOne, 3, started, ev(idNext, kKVSet, pKeyMax, pC, raw(fuzzTimestamp)), ev(idNext, kKVSet, pB, pValueMax, 5), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 2, started, ev(idNext, kKVSet, pKeyOver, pC, 1), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 2, started, ev(idNext, kKVSet, pB, pValueOver, 1), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 2, started, ev(idNext, kKVCleared, pKeyOver), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 2, started, ev(idNext, kKVSetPtr, pB, pValueOver, 1), 0, 0, 0, named)},
		{"i", "k:1", "v:2", prog(0, execOne, 5, started, ev(idNext, kKVSetPtr, pB, pC, raw(math.MaxUint64)),
			ev(idNext, kKVSet, pColons, pBraces, 0), ev(idNext, kKVClearedPtr, pColons), ev(idNext, kKVSet, pEmpty, pEmpty, 0), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 4, started, ev(idNext, kKVSet, pB, pC, 1), ev(idNext, kKVAllClearedPtr), ev(idNext, kKVSet, pUnicode, pJSON, 2), 0, 0, 0, named)},
		{"i", "k", "v", prog(0, execOne, 2, started, ev(idNext, kKVSet, pB, pC, 1), 0, 0, 0)},
		{"i", "k", "v", prog(0, execOne, 3, started, ev(idNext, kKVSet, pB, pC, 1), ev(idNext, kKVAllCleared), 0, 0, 0, 2, none, 1, 0, 0, 0)},
		// custom status: set, cleared, pointer form, without record
		{"i", "st", "v", prog(0, execOne, 3, started, ev(idNext, kCustomStatus, some(pB)), ev(idNext, kCustomStatusPtr, some(pJSON)), 0, 0, 0, named)},
		{"i", "st", "v", prog(0, execOne, 2, started, ev(idNext, kCustomStatus, none), 0, 0, 0, named)},
		{"i", "st", "v", prog(0, execOne, 1, ev(idNext, kCustomStatus, some(pB)), 0, 0, 0)},
		// oversized payloads: 1 MiB event and activity input
		{"i", "payload", "v", prog(0, execOne, 2, started, ev(idNext, kExternal, pB, pMiB), 1, wActivity, pA, 1, 2, pB, pMiB, none, none, 0, 0, named)},
		// worker and orchestrator items: wrong queue, nil, empty instance, unencodable
		{"i", "A", "in", prog(0, execOne, 1, started, 1, wStart, pA, pB, pB, none, none, none, 1, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 1, wNil, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 1, wActivity, pEmpty, 1, 2, pB, pC, none, none, 0, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 1, activity, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 1, wNilPtr, 1, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 1, wExternal, pEmpty, pB, pC, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 1, wActFailed, pA, 1, 2, dEmpty, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 2, wTimer, pA, 1, 2, raw(1<<63-1), wExternal, pBraces, pB, pC, 0, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 1, wActivity, pUnicode, 1, 2, pB, pC, some(pColons), some(pBraces), 1, wSubFailed, pSpaces, 1, 2, 4, pB, 3, 4, 2, pA, 1, pB, 0, named)},
		// cancelled activities: scheduled in the same turn, empty and hostile instances
		{"i", "A", "in", prog(0, execOne, 2, started, scheduled, 1, activity, 0, 1, pA, 1, 2, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 0, 1, pEmpty, 1, 2, named)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 0, 2, pBadUTF8, raw(math.MaxUint64), raw(math.MaxUint64), pColons, 0, 0, named)},
		// metadata: every status, hostile strings, parent, pinned versions
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 0, 0, 2, some(pB), 1, 1, 1, pA, 2)},
		{"i", "out", "in", prog(0, execOne, 1, started, 0, 0, 0, 3, some(pMiB), 2, pUnicode, 2, pJSON, 1, pColons, 3, pB)},
		{"i", "1.2.3", "in", prog(0, execOne, 1, started, 0, 0, 0, 4, none, 1, 1, 0, 3, pB)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 0, 0, 5, pBadUTF8, some(pBadUTF8), 2, pBadUTF8, 2, pBadUTF8, 1, pBadUTF8)},
		{"i", "A", "in", prog(0, execOne, 1, started, 0, 0, 0, 5, pEmpty, none, 2, pSpaces, 0, 1, pEmpty)},
	}
}

type tokenSeed struct {
	token string
	prog  []byte
}

func tokenSeeds() []tokenSeed {
	// step: method, live-token selector, transform, then exactly the
	// arguments the method reads (missing ones are 0, extra ones dropped)
	argCount := [...]int{mAckOrch: 0, mAbandonOrch: 2, mRenewOrch: 1, mAckWork: 1, mAbandonWork: 2, mRenewWork: 1}
	step := func(method, live, transform int, args ...int) []any {
		out := []any{method, live, transform}
		for i := 0; i < argCount[method]; i++ {
			a := 0
			if i < len(args) {
				a = args[i]
			}
			out = append(out, a)
		}
		return out
	}
	var all []any
	for m := mAckOrch; m <= mRenewWork; m++ {
		all = append(all, step(m, m%2, 0, 3, 1))
	}
	return []tokenSeed{
		{"", prog(all)},
		{"not-a-token", prog(all)},
		{"{", prog(all)},
		{"}:", prog(all)},
		{" ", prog(all)},
		{"日本語", prog(all)},
		{"\xff\xfe", prog(all)},
		{"00000000-0000-0000-0000-000000000000", prog(all)},
		{strings.Repeat("t", 4096), prog(step(mAckOrch, 0, 0), step(mRenewWork, 0, 0, 7))},
		// the other kind's live token, expired tokens (ack and renew only)
		{"x", prog(step(mAckWork, 0, 1, 1), step(mAbandonWork, 0, 1, 2, 0), step(mRenewWork, 0, 1, 3))},
		{"x", prog(step(mAckOrch, 0, 2), step(mAbandonOrch, 0, 2, 2, 1), step(mRenewOrch, 0, 2, 5))},
		{"x", prog(step(mAckOrch, 0, 3), step(mRenewOrch, 0, 3, 5), step(mAbandonOrch, 0, 3, 1, 1))},
		{"x", prog(step(mAckWork, 0, 4, 0), step(mRenewWork, 0, 4, 5), step(mAbandonWork, 0, 4, 1, 1))},
		// near misses of live tokens: suffix, prefix, case, truncated, space, invalid UTF-8
		{"x", prog(step(mAckOrch, 0, 5), step(mAckWork, 1, 5, 1), step(mRenewOrch, 0, 6, 1), step(mRenewWork, 1, 6, 1))},
		{"", prog(step(mAckOrch, 0, 5), step(mAckWork, 1, 6, 0))},
		{"x", prog(step(mAckOrch, 0, 7), step(mAckWork, 1, 7, 0), step(mAbandonOrch, 0, 8, 0, 0), step(mAbandonWork, 1, 8, 0, 0))},
		{"x", prog(step(mRenewOrch, 0, 9, 1), step(mRenewWork, 1, 9, 1), step(mAckOrch, 0, 13), step(mAckWork, 1, 13, 1))},
		// negative durations with unknown tokens; invalid arguments with the
		// live token of the method's kind (transform 14)
		{"x", prog(step(mAbandonOrch, 0, 0, 8, 0), step(mRenewOrch, 0, 0, 9), step(mAbandonWork, 0, 0, 10, 1), step(mRenewWork, 0, 0, 8))},
		{"x", prog(step(mAckOrch, 0, 14), step(mAbandonOrch, 0, 14, 0, 0), step(mRenewOrch, 0, 14, 7), []any{mAckWork, 0, 14},
			step(mAbandonWork, 0, 14, 3, 1), step(mRenewWork, 0, 14, 5), step(mRenewOrch, 0, 14, 9))},
		// values the token indexes hold: an instance id, an item seq, empty
		{"x", prog(step(mAckOrch, 0, 10), step(mAbandonOrch, 0, 10, 0, 0), step(mAckWork, 0, 11, 0), step(mAbandonWork, 0, 11, 0, 1), step(mRenewWork, 0, 12, 0))},
	}
}

type appendSeed struct {
	instance, s1 string
	prog         []byte
}

func appendSeeds() []appendSeed {
	two := []any{2, ev(idNext, kStarted, pA, pB, pB, none, 0, 0, none), ev(idNext, kExternal, pB, pB)}
	return []appendSeed{
		{idBraces, "x", prog(execOne, 0, two)},
		{idColons, "x", prog(execOne, 0, two)},
		{idSpaces, "x", prog(execOne, 0, two)},
		{idUnicode, "x", prog(execOne, 0, two)},
		{idTag, "x", prog(execOne, 0, two)},
		{idBadUTF8, "x", prog(execOne, 0, two)},
		{"", "x", prog(execOne, 0, two)},
		{"", "x", prog(execOne, 0, 0)},
		{"i", "x", prog(execOne, 2, 0)},
		// execution ids: 2, 0, 2^64-1
		{"i", "x", prog(execTwo, 1, two)},
		{"i", "x", prog(execRaw, raw(0), 0, two)},
		{"i", "x", prog(execRaw, raw(1<<63-1), 2, two)},
		// (execution ids >= 2^63: testdata/fuzz/FuzzAppendAndRead)
		// event ids: zero, duplicate, decreasing, against stored history, huge
		{"i", "x", prog(execOne, 0, 1, ev(raw(0), kCompleted, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(idNext, kCompleted, pB), ev(idDup, kCompleted, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(raw(7), kCompleted, pB), ev(idDec, kCompleted, pB))},
		{"i", "x", prog(execOne, 2, 1, ev(raw(2), kCompleted, pB))},
		{"i", "x", prog(execOne, 2, 1, ev(idNext, kCompleted, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(raw(math.MaxUint64-1), kCompleted, pB), ev(idNext, kCompleted, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(raw(math.MaxUint64), kCompleted, pB), ev(idNext, kCompleted, pB))},
		{"i", "x", prog(execOne, 1, 2, ev(raw(1<<53+1), kCompleted, pB), ev(raw(1<<53), kCompleted, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(raw(999_999_999_999_999), kCompleted, pB), ev(raw(1_000_000_000_000_000), kCompleted, pB))},
		// contents: JSON-breaking, control, invalid UTF-8, nil kinds, KV over limits (allowed in history)
		{"i", `"]}`, prog(execOne, 0, 2, ev(idNext, kExternal, pB, pJSON), ev(idNext, kExternal, pControl, pUnicode))},
		{"i", "\xff", prog(execOne, 0, 1, ev(idNext, kExternal, pB, pB))},
		{"i", "x", prog(execOne, 0, 2, ev(idNext, kCompleted, pB), ev(idNext, kNil))},
		{"i", "x", prog(execOne, 0, 1, ev(idNext, kNilPtr))},
		{"i", "x", prog(execOne, 0, 1, ev(idNext, kFailed, dEmpty))},
		{"i", "k", prog(execOne, 0, 2, ev(idNext, kKVSet, pKeyOver, pValueOver, 1), ev(idNext, kKVSetPtr, pB, pB, raw(math.MaxUint64)))},
		// 1 MiB payload, many events
		{"i", "payload", prog(execOne, 0, 1, ev(idNext, kExternal, pB, pMiB))},
		{"i", "x", prog(execOne, 1, 8, ev(idNext, kCompleted, pB), ev(idNext, kCompleted, pA), ev(idNext, kCompleted, pC),
			ev(idNext, kCompleted, pEmpty), ev(idNext, kCompleted, pBraces), ev(idNext, kCompleted, pColons),
			ev(idNext, kCompleted, pSpaces), ev(idNext, kCompleted, pUnicode))},
	}
}

type kvSeed struct {
	instance, key string
	prog          []byte
}

func kvSeeds() []kvSeed {
	// query: instance transform, key transform, and the byte each reads
	// when it picks from the pool (7: str; 4: str, 5: a held key's index)
	query := func(inst, key int) []any {
		out := []any{inst}
		if inst == 7 {
			out = append(out, pA)
		}
		out = append(out, key)
		switch key {
		case 4:
			out = append(out, pB)
		case 5:
			out = append(out, 0)
		}
		return out
	}
	queries := []any{10}
	for i := 0; i < 10; i++ {
		queries = append(queries, query(i, i%7))
	}
	set := func(k, v int) []any { return []any{0, k, v, raw(fuzzTimestamp)} }
	clearKey := func(k int) []any { return []any{1, k} }
	clearAll := []any{2}
	return []kvSeed{
		{idBraces, "k", prog(1, 0, 1, set(pB, pC), queries)},
		{idColons, "a:b", prog(1, 0, 2, set(pB, pC), set(pColons, pB), queries)},
		{idSpaces, " k ", prog(1, 1, 1, set(pB, pSpaces), queries)},
		{idUnicode, "ключ", prog(1, 0, 1, set(pB, pUnicode), queries)},
		{idTag, "{k}", prog(1, 0, 1, set(pB, pBraces), queries)},
		{idBadUTF8, "\xff", prog(1, 0, 1, set(pEmpty, pC), queries)},
		{"", "", prog(0, queries)},
		{"unknown", "k", prog(0, queries)},
		// empty key and value, over the limits (rejected setup), at the limits
		{"i", "", prog(1, 0, 1, set(pB, pEmpty), queries)},
		{"i", "k", prog(1, 0, 2, set(pKeyMax, pValueMax), set(pB, pC), queries)},
		{"i", "k", prog(2, 0, 1, set(pB, pC), 0, 1, set(pKeyOver, pC), queries)},
		{"i", "k", prog(1, 0, 1, set(pB, pValueOver), queries)},
		{"i", "k", prog(1, 0, 1, set(pB, pBadUTF8), queries)},
		// delta over store: set, complete, then clear one / all / set again
		{"i", "k", prog(2, 1, 2, set(pB, pC), set(pColons, pC), 0, 1, clearKey(pB), queries)},
		{"i", "k", prog(2, 1, 2, set(pB, pC), set(pColons, pC), 0, 2, clearAll, set(pUnicode, pC), queries)},
		{"i", "k", prog(2, 0, 2, set(pB, pC), clearKey(pB), 1, 2, set(pB, pJSON), clearAll, queries)},
		{"i", "k:0", prog(2, 1, 1, set(pB, pColons), 1, 1, set(pB, pControl), queries)},
	}
}
