package redisprovider

import (
	"context"
	"encoding/json"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Limits of the KV store. Redis would take 512 MB strings, but KV state is
// read by every fetch of the instance (the snapshot) and kept in memory: a
// turn writing more than this is a bug to report, not data to store.
const (
	// MaxKVKeyBytes is the largest KV key an ack accepts.
	MaxKVKeyBytes = 1 << 10
	// MaxKVValueBytes is the largest KV value an ack accepts.
	MaxKVValueBytes = 256 << 10
)

// appendKVOps encodes the KV events of a delta in order: 's' set, 'c' clear
// one key, 'a' clear all. A key or value over the limits rejects the ack.
func appendKVOps(op string, a *args, events []duroxide.Event) error {
	var ops args
	n := 0
	for _, e := range events {
		switch k := kindValue(e).(type) {
		case duroxide.KeyValueSetEvent:
			if err := checkKV(op, k.Key, k.Value); err != nil {
				return err
			}
			ops.str("s").str(k.Key).str(k.Value).u64(k.LastUpdatedAtMs)
		case duroxide.KeyValueClearedEvent:
			if err := checkKV(op, k.Key, ""); err != nil {
				return err
			}
			ops.str("c").str(k.Key).str("").str("0")
		case duroxide.KeyValuesClearedEvent:
			ops.str("a").str("").str("").str("0")
		default:
			continue
		}
		n++
	}
	a.int(n)
	*a = append(*a, ops...)
	return nil
}

func checkKV(op, key, value string) error {
	if len(key) > MaxKVKeyBytes {
		return invalid(op, "KV key of %d bytes exceeds the limit of %d", len(key), MaxKVKeyBytes)
	}
	if len(value) > MaxKVValueBytes {
		return invalid(op, "KV value of key %q is %d bytes, over the limit of %d", key, len(value), MaxKVValueBytes)
	}
	return nil
}

// GetKVValue reads one key of the live view (the running execution's writes
// over the store). An unknown instance or key is found=false, not an error.
func (p *partition) GetKVValue(ctx context.Context, instance, key string) (string, bool, error) {
	const op = "get_kv_value"
	if instance == "" {
		return "", false, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance).str(key)
	res, err := p.run(ctx, op, scriptGetKVValue, a)
	if err != nil || res == nil {
		return "", false, err
	}
	s, ok := res.(string)
	if !ok {
		return "", false, undecodable(op, "instance %s key %q: unexpected script reply", instance, key)
	}
	e, err := kvEntry(op, instance, key, s)
	if err != nil {
		return "", false, err
	}
	return e.Value, true, nil
}

// Reply of lua/get_kv_all_values.lua: one flat array of key, entry pairs.
const kvAllEntries = 0

// GetKVAllValues reads the live view of an instance's KV store (empty for an
// unknown instance).
func (p *partition) GetKVAllValues(ctx context.Context, instance string) (map[string]string, error) {
	const op = "get_kv_all_values"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptGetKVAllValues, a)
	if err != nil {
		return nil, err
	}
	r := newReply(op, res)
	flat := r.strs(kvAllEntries)
	out := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		e, err := kvEntry(op, instance, flat[i], flat[i+1])
		if err != nil {
			return nil, err
		}
		out[flat[i]] = e.Value
	}
	return out, r.err
}

// kvEntry parses a stored entry read for op; a corrupt one is a permanent
// error naming the instance and key.
func kvEntry(op, instance, key, raw string) (duroxide.KVEntry, error) {
	e, err := parseKVEntry(raw)
	if err != nil {
		return e, undecodable(op, "instance %s key %q: %v", instance, key, err)
	}
	return e, nil
}

// Reply of lua/get_instance_stats.lua (nil for an unknown instance).
const (
	statsEvents = iota
	statsHistoryBytes
	statsFirstEvent
	statsKVKeys
	statsKVBytes
)

// GetInstanceStats reports sizes of an instance's current execution and KV
// state; nil for an unknown instance. Costs O(KV keys): the history is never
// walked beyond its first event.
func (p *partition) GetInstanceStats(ctx context.Context, instance string) (*duroxide.InstanceStats, error) {
	const op = "get_instance_stats"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	var a args
	a.str(instance)
	res, err := p.run(ctx, op, scriptGetInstanceStats, a)
	if err != nil || res == nil {
		return nil, err
	}
	r := newReply(op, res)
	st := &duroxide.InstanceStats{
		HistoryEventCount: uint64(r.int(statsEvents)),
		HistorySizeBytes:  uint64(r.int(statsHistoryBytes)),
		KVUserKeyCount:    uint64(r.int(statsKVKeys)),
		KVTotalValueBytes: uint64(r.int(statsKVBytes)),
	}
	if first, ok := r.str(statsFirstEvent); ok {
		st.QueuePendingCount = carryForwardCount(first)
	}
	return st, r.err
}

// carryForwardCount counts the carry-forward events of an execution's
// OrchestrationStarted event (event id 1); 0 when the first stored event is
// something else or cannot be read.
func carryForwardCount(raw string) uint64 {
	var e duroxide.Event
	if err := json.Unmarshal([]byte(raw), &e); err != nil || e.EventID != duroxide.InitialEventID {
		return 0
	}
	if s, ok := e.Kind.(duroxide.OrchestrationStartedEvent); ok && s.CarryForwardEvents != nil {
		return uint64(len(*s.CarryForwardEvents))
	}
	return 0
}
