package engine

import (
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// busy schedules a bit of everything, so arbitrary histories meet every
// matching path of the engine.
func busy(ctx *Context, _ string) (string, error) {
	a := ctx.ScheduleActivity("A", "", nil, nil)
	tm := ctx.Timer(time.Second)
	w := ctx.WaitForEvent("e")
	if ctx.Select(a, tm, w) == 0 {
		ctx.SetValue("k", "v")
	}
	q := ctx.Dequeue("q")
	s := ctx.ScheduleSubOrchestration("C", "", "", nil)
	g := ctx.Go(func(ctx *Context) (string, error) {
		if _, err := ctx.ScheduleActivity("A", "", nil, nil).Get(); err != nil {
			return "", err
		}
		return ctx.WaitForEvent("e").Get()
	})
	if ctx.Select(g, ctx.Timer(time.Second)) == 1 {
		ctx.ClearValue("k")
	}
	ctx.Join(q, s)
	ctx.SetCustomStatus(ptr("x"))
	return "done", nil
}

func fuzzKind(b byte) (duroxide.EventKind, bool) {
	kinds := []duroxide.EventKind{
		duroxide.ActivityScheduledEvent{Name: "A"}, duroxide.ActivityCompletedEvent{}, duroxide.ActivityFailedEvent{Details: duroxide.ApplicationFailure("f")},
		duroxide.TimerCreatedEvent{}, duroxide.TimerFiredEvent{}, duroxide.ExternalSubscribedEvent{Name: "e"},
		duroxide.ExternalEventEvent{Name: "e"}, duroxide.QueueSubscribedEvent{Name: "q"}, duroxide.QueueEventDeliveredEvent{Name: "q"},
		duroxide.SubOrchestrationScheduledEvent{Name: "C", Instance: "sub::9"}, duroxide.SubOrchestrationCompletedEvent{},
		duroxide.ActivityCancelRequestedEvent{Reason: droppedFuture}, duroxide.ExternalSubscribedCancelledEvent{Reason: droppedFuture},
		duroxide.QueueSubscriptionCancelledEvent{Reason: droppedFuture}, duroxide.KeyValueSetEvent{Key: "k", Value: "v"},
		duroxide.CustomStatusUpdatedEvent{}, duroxide.OrchestrationCancelRequestedEvent{Reason: "r"},
	}
	return kinds[int(b)%len(kinds)], b&0x80 != 0
}

func FuzzReplayNeverPanics(f *testing.F) {
	f.Add([]byte{0, 3, 5, 0x81, 7, 8, 9, 0x8a})
	f.Add([]byte{0, 0x81, 0x81, 16})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := hist{}.add(started(""))
		for i, b := range data {
			kind, linked := fuzzKind(b)
			if linked {
				h = h.add(kind, uint64(i%len(h)+1))
			} else {
				h = h.add(kind)
			}
		}
		persisted := len(h) / 2
		e := engineAt(h, persisted)
		_ = e.execute(busy, "", "O", "1.0.0")
		e.Close()
	})
}
