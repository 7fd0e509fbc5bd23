package engine

import (
	"fmt"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// duroxide's per-turn limits; a turn that breaks one fails the instance.
const (
	MaxCustomStatusBytes = 256 * 1024 // duroxide's MAX_CUSTOM_STATUS_BYTES
	maxTagNameBytes      = 256
	MaxKVKeys            = 100       // duroxide's MAX_KV_KEYS
	MaxKVValueBytes      = 16 * 1024 // duroxide's MAX_KV_VALUE_BYTES
)

// DefaultMaxPayloadBytes bounds one payload (an orchestration or activity
// input or output, an event's data) before it reaches storage. duroxide has
// no such limit; 4 MiB is one a turn carries with room to spare (see
// durable.MaxPayloadBytes for why and what was measured).
const DefaultMaxPayloadBytes = 4 << 20

// payloadViolation is the failure message for an action whose input is
// over max bytes ("" when it fits or carries no input).
func payloadViolation(a *action, max int) string {
	n := len(a.input)
	if n <= max {
		return ""
	}
	switch a.kind {
	case actCallActivity:
		return fmt.Sprintf("Activity '%s' input size (%d bytes) exceeds limit (%d bytes)", a.name, n, max)
	case actStartSubOrchestration, actStartDetached:
		return fmt.Sprintf("Orchestration '%s' input size (%d bytes) exceeds limit (%d bytes)", a.name, n, max)
	case actContinueAsNew:
		return fmt.Sprintf("ContinueAsNew input size (%d bytes) exceeds limit (%d bytes)", n, max)
	}
	return ""
}

// outputViolation is the failure message for an orchestration output over
// max bytes ("" when it fits).
func outputViolation(output string, max int) string {
	if n := len(output); n > max {
		return fmt.Sprintf("Orchestration output size (%d bytes) exceeds limit (%d bytes)", n, max)
	}
	return ""
}

// limitViolation checks the turn's new events against duroxide's limits and
// returns the failure message of the first one broken ("" when none is).
func limitViolation(delta []duroxide.Event, snapshot map[string]duroxide.KVEntry) string {
	for i := len(delta) - 1; i >= 0; i-- {
		if c, ok := delta[i].Kind.(duroxide.CustomStatusUpdatedEvent); ok && c.Status != nil {
			if n := len(*c.Status); n > MaxCustomStatusBytes {
				return fmt.Sprintf("Custom status size (%d bytes) exceeds limit (%d bytes)", n, MaxCustomStatusBytes)
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
		if kv, ok := ev.Kind.(duroxide.KeyValueSetEvent); ok && len(kv.Value) > MaxKVValueBytes {
			return fmt.Sprintf("KV value for key '%s' (%d bytes) exceeds limit (%d bytes)", kv.Key, len(kv.Value), MaxKVValueBytes)
		}
	}
	if n := kvKeyCount(delta, snapshot); n > MaxKVKeys {
		return fmt.Sprintf("KV key count (%d) exceeds limit (%d)", n, MaxKVKeys)
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
