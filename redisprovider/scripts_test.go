package redisprovider

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	dxredis "github.com/duroxide-go/duroxide-redis"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Every Lua script has exactly one handle and every handle names a script:
// a script without a handle is dead code (or a call written as a string), a
// handle without a script fails at New.
func TestScriptHandlesMatchLuaFiles(t *testing.T) {
	handles := map[string]luaScript{}
	for h := range scriptCount {
		name := h.String()
		if name == "" {
			t.Errorf("handle %d has no file name in scriptFiles", h)
			continue
		}
		if other, dup := handles[name]; dup {
			t.Errorf("handles %d and %d both name lua/%s.lua", other, h, name)
		}
		handles[name] = h
	}
	files := map[string]bool{}
	for _, name := range dxredis.ScriptNames() {
		files[name] = true
		if _, ok := handles[name]; !ok {
			t.Errorf("lua/%s.lua has no handle in scriptFiles", name)
		}
	}
	for name := range handles {
		if !files[name] {
			t.Errorf("scriptFiles names lua/%s.lua, which does not exist", name)
		}
	}
}

// scriptTrap fails every script call once armed, recording which script was
// asked for, so a test sees both sides of a method: the script it runs and
// the operation its error names.
type scriptTrap struct {
	mu    sync.Mutex
	armed bool
	shas  map[string]string // sha1 hex -> script name
	ran   []string
}

func (h *scriptTrap) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptTrap) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *scriptTrap) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		trapped := h.armed && (cmd.Name() == "evalsha" || cmd.Name() == "eval")
		if !trapped {
			h.mu.Unlock()
			return next(ctx, cmd) // which may come back here: not under h.mu
		}
		defer h.mu.Unlock()
		id := fmt.Sprint(cmd.Args()[1])
		if cmd.Name() == "eval" {
			sum := sha1.Sum([]byte(id))
			id = hex.EncodeToString(sum[:])
		}
		h.ran = append(h.ran, h.shas[id])
		// a refused dial: retryable, and proof that nothing was sent, so no
		// fetch tries to give a lock back
		err := &net.OpError{Op: "dial", Err: errors.New("trapped")}
		cmd.SetErr(err)
		return err
	}
}

// take returns the scripts run since the last call.
func (h *scriptTrap) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ran := h.ran
	h.ran = nil
	return ran
}

// Each method's error names the script it runs: the Lua file, the handle and
// the operation are one name. Where one script serves several methods, they
// are listed here.
func TestOperationsNameTheirScripts(t *testing.T) {
	shared := map[string][]string{
		"read_history":     {"read", "read_with_execution", "read_history_with_execution_id"},
		"prune_executions": {"prune_executions_bulk"},
		// an ack-and-fetch whose ack fails returns the plain ack's error
		"ack_fetch_work_item":          {"ack_work_item"},
		"ack_fetch_orchestration_item": {"ack_orchestration_item"},
		"enqueue_for_orchestrator":     {"enqueue_for_orchestrator_batch"},
		"enqueue_for_worker":           {"enqueue_for_worker_batch"},
		"pause_instance":               {"resume_instance"},
		"set_limit":                    {"delete_limit"},
		// an orchestration name's limit is set and deleted by the same calls
		"set_orchestration_limit":  {"set_limit", "delete_limit"},
		"set_priority":             {"set_aging_window"},
		"pause_orchestration_name": {"resume_orchestration_name"},
	}
	m := miniredis.RunT(t)
	trap := &scriptTrap{shas: map[string]string{}}
	for h := range scriptCount {
		src, err := dxredis.Script(h.String())
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum([]byte(src))
		trap.shas[hex.EncodeToString(sum[:])] = h.String()
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	rdb.AddHook(trap)
	t.Cleanup(func() { rdb.Close() })
	p, err := openPartition(context.Background(), Options{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	trap.mu.Lock()
	trap.armed = true
	trap.mu.Unlock()

	// the pollers', no method's: TestRearmedMarkerExpires, TestDueLoopWakesForAnEarlierDueTime
	covered := map[string]bool{"rearm_wake": true, "move_due": true}
	for _, call := range scriptCalls(p) {
		err := call()
		ran := trap.take()
		var pe *duroxide.ProviderError
		if len(ran) != 1 || !errors.As(err, &pe) {
			t.Errorf("a call ran scripts %v and returned %v; want one trapped script", ran, err)
			continue
		}
		script := ran[0]
		covered[script] = true
		if pe.Operation != script && !slices.Contains(shared[script], pe.Operation) {
			t.Errorf("operation %s runs lua/%s.lua: one operation, one name", pe.Operation, script)
		}
	}
	for h := range scriptCount {
		if !covered[h.String()] {
			t.Errorf("no call here runs lua/%s.lua", h)
		}
	}
}

// scriptCalls lists a call of every method that runs a script, with input
// that passes validation.
func scriptCalls(p *partition) []func() error {
	ctx := context.Background()
	ev := duroxide.NewEvent(1, "i", 1, nil, duroxide.ExternalEventEvent{Name: "e", Data: `"x"`})
	act := duroxide.ActivityExecute{Instance: "i", ExecutionID: 1, ID: 1, Name: "A", Input: `"x"`}
	start := duroxide.StartOrchestration{Instance: "i", Orchestration: "O", Input: `"x"`, ExecutionID: 1}
	ids := duroxide.InstanceFilter{InstanceIDs: []string{"i"}}
	errOf := func(_ any, err error) error { return err }
	return []func() error{
		func() error { return p.AckOrchestrationItem(ctx, "t", duroxide.OrchestrationCommit{ExecutionID: 1}) },
		func() error { return p.AbandonOrchestrationItem(ctx, "t", 0, false) },
		func() error {
			return p.AbandonOrchestrationItemWithNote(ctx, "t", 0, false, duroxide.PendingStart{Orchestration: "O", Reason: "r"})
		},
		func() error { return errOf(p.PendingStart(ctx, "i")) },
		func() error { return errOf(p.PauseInstance(ctx, "i")) },
		func() error { return errOf(p.ResumeInstance(ctx, "i")) },
		func() error { return p.SetLimit(ctx, duroxide.Limit{Name: "a", Concurrency: 1}) },
		func() error { return errOf(p.DeleteLimit(ctx, duroxide.ActivityName, "a")) },
		func() error {
			return p.SetLimit(ctx, duroxide.Limit{Kind: duroxide.OrchestrationName, Name: "O", Concurrency: 1})
		},
		func() error { return errOf(p.SetPriority(ctx, duroxide.ActivityName, "a", 1)) },
		func() error { return errOf(p.SetAgingWindow(ctx, 5)) },
		func() error { return errOf(p.PauseOrchestrationName(ctx, "O")) },
		func() error { return errOf(p.ResumeOrchestrationName(ctx, "O")) },
		func() error { return errOf(p.ListPendingStarts(ctx, 1)) },
		func() error { return errOf(p.UpsertSchedule(ctx, "s", "{}", "put", nil)) },
		func() error { return errOf(p.DeleteSchedule(ctx, "s")) },
		func() error { return p.PauseSchedule(ctx, "s", true, "") },
		func() error { return errOf(p.TriggerSchedule(ctx, "s")) },
		func() error { return errOf(p.GetSchedule(ctx, "s", 1)) },
		func() error { return errOf(p.ListSchedules(ctx)) },
		func() error { return errOf(p.ClaimScheduleFirings(ctx, time.Second, 1)) },
		func() error { return errOf(p.ConfirmScheduleFiring(ctx, duroxide.ScheduleConfirm{ID: "s"})) },
		func() error { return errOf(p.TakeBufferedFiring(ctx, "s", 1, time.Second)) },
		func() error { return errOf(p.NextScheduleDue(ctx)) },
		func() error { return p.RenewOrchestrationItemLock(ctx, "t", time.Second) },
		func() error { return p.EnqueueForOrchestrator(ctx, start, 0) },
		func() error {
			return p.EnqueueForOrchestratorChecked(ctx, start, duroxide.CheckedEnqueue{Require: duroxide.RequireAbsent})
		},
		func() error { return errOf(p.FetchOrchestrationItem(ctx, 0, 0, nil)) },
		func() error { return p.EnqueueForWorker(ctx, act) },
		func() error { return p.EnqueueForWorkerBatch(ctx, []duroxide.WorkItem{act, act}) },
		func() error { return p.EnqueueForOrchestratorBatch(ctx, []duroxide.WorkItem{start, start}, 0) },
		func() error { return errOf(p.FetchWorkItem(ctx, 0, 0, nil, duroxide.DefaultOnly())) },
		func() error { return p.AckWorkItem(ctx, "t", nil) },
		func() error { return errOf(p.AckWorkItemAndFetch(ctx, "t", nil, 0, 0, nil, duroxide.DefaultOnly())) },
		func() error {
			return errOf(p.AckOrchestrationItemAndFetch(ctx, "t", duroxide.OrchestrationCommit{ExecutionID: 1}, 0, 0, nil))
		},
		func() error { return errOf(p.FetchOrchestrationItemLazy(ctx, 0, 0, nil)) },
		func() error {
			return errOf(p.AckOrchestrationItemAndFetchLazy(ctx, "t", duroxide.OrchestrationCommit{ExecutionID: 1}, 0, 0, nil))
		},
		func() error { return p.AbandonWorkItem(ctx, "t", 0, false) },
		func() error { return p.RenewWorkItemLock(ctx, "t", time.Second) },
		func() error { return errOf(p.RenewSessionLock(ctx, []string{"o"}, time.Second, time.Second)) },
		func() error { return errOf(p.CleanupOrphanedSessions(ctx, time.Second)) },
		func() error { return errOf(p.Read(ctx, "i")) },
		func() error { return errOf(p.ReadWithExecution(ctx, "i", 1)) },
		func() error { return p.AppendWithExecution(ctx, "i", 1, []duroxide.Event{ev}) },
		func() error { _, _, err := p.GetKVValue(ctx, "i", "k"); return err },
		func() error { return errOf(p.GetKVAllValues(ctx, "i")) },
		func() error { return errOf(p.GetInstanceStats(ctx, "i")) },
		func() error { return errOf(p.ReadHistory(ctx, "i")) },
		func() error { return errOf(p.ReadHistoryWithExecutionID(ctx, "i", 1)) },
		func() error { return errOf(p.LatestExecutionID(ctx, "i")) },
		func() error { return errOf(p.GetInstanceInfo(ctx, "i")) },
		func() error { return errOf(p.GetExecutionInfo(ctx, "i", 1)) },
		func() error { return errOf(p.GetSystemMetrics(ctx)) },
		func() error { return errOf(p.GetQueueDepths(ctx)) },
		func() error {
			_, _, err := p.ListInstancesPage(ctx, duroxide.InstancePageFilter{}, "", 1)
			return err
		},
		func() error { return errOf(p.GetInstanceTree(ctx, "i")) },
		func() error { return errOf(p.InstanceActivity(ctx, "i")) },
		func() error { return errOf(p.Runtimes(ctx)) },
		func() error { return errOf(p.DeleteInstance(ctx, "i", false)) },
		func() error { return errOf(p.DeleteInstancesAtomic(ctx, []string{"i"}, false)) },
		func() error { return errOf(p.DeleteInstanceBulk(ctx, ids)) },
		func() error { return errOf(p.PruneExecutions(ctx, "i", duroxide.PruneOptions{})) },
		func() error { return errOf(p.PruneExecutionsBulk(ctx, ids, duroxide.PruneOptions{})) },
		func() error { return errOf(p.openNamespace(ctx, 1)) },
		func() error { return p.relayMessages(ctx, 1, args{"1", "i", `{"x":1}`, "0"}) },
	}
}
