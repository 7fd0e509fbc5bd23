package durable_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/duroxide-go/duroxide-redis/durable"
)

// helloHistory is what `duroxide-redis history hello-1 --all --json` prints
// for a finished run of Hello (shortened to one line per event); a CI job
// keeps such exports next to the code and replays them on every change.
const helloHistory = `[
{"event_id":1,"source_event_id":null,"instance_id":"hello-1","execution_id":1,"timestamp_ms":1795629176614,"duroxide_version":"0.1.27","type":"OrchestrationStarted","name":"Hello","version":"1.0.0","input":"world","parent_instance":null,"parent_id":null},
{"event_id":2,"source_event_id":null,"instance_id":"hello-1","execution_id":1,"timestamp_ms":1795629176615,"duroxide_version":"0.1.27","type":"ActivityScheduled","name":"Echo","input":"world"},
{"event_id":3,"source_event_id":2,"instance_id":"hello-1","execution_id":1,"timestamp_ms":1795629176637,"duroxide_version":"0.1.27","type":"ActivityCompleted","result":"echo:world"},
{"event_id":4,"source_event_id":null,"instance_id":"hello-1","execution_id":1,"timestamp_ms":1795629176637,"duroxide_version":"0.1.27","type":"OrchestrationCompleted","output":"echo:world"}
]`

// Replay a stored history against the code before deploying it: the code
// that wrote it replays clean, a change that would break running instances
// is reported at the event where code and history part.
func ExampleReplayHistoryJSON() {
	hello := func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Echo", in).Get()
	}
	reg := durable.NewRegistry().MustAddOrchestration("Hello", hello)
	fmt.Println("same code:", durable.ReplayHistoryJSON(reg, strings.NewReader(helloHistory)))

	renamed := func(ctx *durable.OrchestrationContext, in string) (string, error) {
		return ctx.ScheduleActivity("Greet", in).Get() // was Echo
	}
	reg = durable.NewRegistry().MustAddOrchestration("Hello", renamed)
	err := durable.ReplayHistoryJSON(reg, strings.NewReader(helloHistory))
	var re *durable.ReplayError
	if errors.As(err, &re) {
		fmt.Printf("renamed activity: %s execution %d parts at event %d\n", re.Instance, re.Execution, re.EventID)
		fmt.Println("history:", re.Expected)
		fmt.Println("code:   ", re.Got)
	}
	// Output:
	// same code: <nil>
	// renamed activity: hello-1 execution 1 parts at event 2
	// history: ActivityScheduled{Name:"Echo" Input:"world"}
	// code:    ActivityScheduled{Name:"Greet" Input:"world"}
}
