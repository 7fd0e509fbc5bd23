package engine

import (
	"fmt"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func qsub(name string) duroxide.EventKind { return duroxide.QueueSubscribedEvent{Name: name} }
func qmsg(name, data string) duroxide.EventKind {
	return duroxide.QueueEventDeliveredEvent{Name: name, Data: data}
}
func qcancel() duroxide.EventKind {
	return duroxide.QueueSubscriptionCancelledEvent{Reason: droppedFuture}
}

func TestUnmatchedQueueMessages(t *testing.T) {
	cases := []struct {
		name string
		h    hist
		want string
	}{
		{"arrivals only", hist{}.add(qmsg("X", "a")).add(qmsg("X", "b")).add(qmsg("Y", "c")), "[[X a] [X b] [Y c]]"},
		{"subscriptions consume per name", hist{}.add(qsub("X")).add(qsub("Y")).add(qmsg("X", "x1")).add(qmsg("X", "x2")).add(qmsg("Y", "y1")), "[[X x2]]"},
		{"cancelled subscription consumes nothing", hist{}.add(qsub("X")).add(qsub("X")).add(qcancel(), 2).add(qmsg("X", "a")).add(qmsg("X", "b")), "[[X b]]"},
		{"order kept across names", hist{}.add(qsub("A")).add(qmsg("B", "b1")).add(qmsg("A", "a1")).add(qmsg("A", "a2")).add(qmsg("B", "b2")), "[[B b1] [A a2] [B b2]]"},
		{"more subscriptions than messages", hist{}.add(qsub("X")).add(qsub("X")).add(qmsg("X", "only")), "[]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(waitsOf(c.h).queues.unclaimed()); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestOutstandingSchedules(t *testing.T) {
	h := hist{}.add(started("")).
		add(duroxide.ExternalSubscribedEvent{Name: "e"}).                             // 2: answered by 4
		add(duroxide.ExternalSubscribedEvent{Name: "e"}).                             // 3: open
		add(duroxide.ExternalEventEvent{Name: "e", Data: "d"}).                       // 4
		add(duroxide.ExternalSubscribedEvent{Name: "f"}).                             // 5: cancelled by 6
		add(duroxide.ExternalSubscribedCancelledEvent{Reason: "x"}, 5).               // 6
		add(qsub("q")).                                                               // 7: consumes 9
		add(qsub("q")).                                                               // 8: open
		add(qmsg("q", "m")).                                                          // 9
		add(duroxide.SubOrchestrationScheduledEvent{Name: "C", Instance: "sub::10"}). // 10: open
		add(duroxide.SubOrchestrationScheduledEvent{Name: "C", Instance: "kid"}).     // 11: done by 12
		add(duroxide.SubOrchestrationCompletedEvent{Result: ""}, 11)
	e := New("inst", 1, h)
	e.beginTurn()
	out := e.outstanding()
	if fmt.Sprint(out.externalWaits, out.queueWaits, out.subOrchs) != "[3] [8] [sub::10]" {
		t.Fatalf("outstanding %+v", out)
	}
	act := hist{}.add(started("")).
		add(duroxide.ActivityScheduledEvent{Name: "a"}).add(duroxide.ActivityScheduledEvent{Name: "b"}).
		add(duroxide.ActivityScheduledEvent{Name: "c"}).
		add(duroxide.ActivityCompletedEvent{}, 2).add(duroxide.ActivityCancelRequestedEvent{}, 3)
	if got := fmt.Sprint(indexHistory(act).inflightActivities()); got != "[4]" {
		t.Fatalf("in flight %s", got)
	}
}
