package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// duroxide's per-turn limits; a turn that breaks one fails the instance.
const (
	maxCustomStatusBytes = 256 * 1024
	maxTagNameBytes      = 256
	maxKVKeys            = 100
	maxKVValueBytes      = 16 * 1024
)

// limitViolation checks the turn's new events against duroxide's limits and
// returns the failure message of the first one broken ("" when none is).
func limitViolation(delta []duroxide.Event, snapshot map[string]duroxide.KVEntry) string {
	for i := len(delta) - 1; i >= 0; i-- {
		if c, ok := delta[i].Kind.(duroxide.CustomStatusUpdatedEvent); ok && c.Status != nil {
			if n := len(*c.Status); n > maxCustomStatusBytes {
				return fmt.Sprintf("Custom status size (%d bytes) exceeds limit (%d bytes)", n, maxCustomStatusBytes)
			}
			break
		}
	}
	for _, ev := range delta {
		if a, ok := ev.Kind.(duroxide.ActivityScheduledEvent); ok && a.Tag != nil && len(*a.Tag) > maxTagNameBytes {
			return fmt.Sprintf("Activity '%s' tag size (%d bytes) exceeds limit (%d bytes)", a.Name, len(*a.Tag), maxTagNameBytes)
		}
	}
	for _, ev := range delta {
		if kv, ok := ev.Kind.(duroxide.KeyValueSetEvent); ok && len(kv.Value) > maxKVValueBytes {
			return fmt.Sprintf("KV value for key '%s' (%d bytes) exceeds limit (%d bytes)", kv.Key, len(kv.Value), maxKVValueBytes)
		}
	}
	if n := kvKeyCount(delta, snapshot); n > maxKVKeys {
		return fmt.Sprintf("KV key count (%d) exceeds limit (%d)", n, maxKVKeys)
	}
	return ""
}

func kvKeyCount(delta []duroxide.Event, snapshot map[string]duroxide.KVEntry) int {
	keys := make(map[string]bool, len(snapshot))
	for k := range snapshot {
		keys[k] = true
	}
	for _, ev := range delta {
		switch k := ev.Kind.(type) {
		case duroxide.KeyValueSetEvent:
			keys[k.Key] = true
		case duroxide.KeyValueClearedEvent:
			delete(keys, k.Key)
		case duroxide.KeyValuesClearedEvent:
			keys = map[string]bool{}
		}
	}
	return len(keys)
}

// enforceLimits fails the turn when it breaks a limit: the failure is
// appended, and nothing the turn scheduled is dispatched (duroxide does not
// tell a parent about this failure either).
func (t *turnOutput) enforceLimits(instance string, snapshot map[string]duroxide.KVEntry) *duroxide.ErrorDetails {
	msg := limitViolation(t.delta, snapshot)
	if msg == "" {
		return nil
	}
	d := appFailure(duroxide.AppErrorOrchestrationFailed, "", msg)
	t.append(nil, duroxide.OrchestrationFailedEvent{Details: d})
	t.worker, t.orch = nil, nil
	return &d
}
