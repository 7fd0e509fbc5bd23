package durable_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
	"github.com/duroxide-go/duroxide-redis/redisprovider"
)

// Ports of duroxide's tests/poison_message_tests.rs. The unit tests of
// PoisonMessageType / RuntimeOptions there concern duroxide's Rust types and are
// covered by package duroxide's codec tests and durable's option defaults; the
// end-to-end tests are ported with poisonProvider, the counterpart of duroxide's
// PoisonInjectingProvider.

// poisonProvider reports a forged attempt count on fetches, so the runtime sees a
// message as delivered too often without the test failing it for real N times.
type poisonProvider struct {
	*redisprovider.Provider
	orchAttempts     atomic.Uint32 // next orchestration fetch only
	activityAttempts atomic.Uint32 // every activity fetch while set
	activityName     string        // only for this activity, when set
}

func (p *poisonProvider) FetchOrchestrationItem(ctx context.Context, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.inflate(p.Provider.FetchOrchestrationItem(ctx, lock, poll, f))
}

// FetchOrchestrationItemLazy is the history-free fetch the runtime uses
// while its instance cache is on.
func (p *poisonProvider) FetchOrchestrationItemLazy(ctx context.Context, lock, poll time.Duration, f *duroxide.DispatcherCapabilityFilter) (*duroxide.OrchestrationItem, error) {
	return p.inflate(p.Provider.FetchOrchestrationItemLazy(ctx, lock, poll, f))
}

func (p *poisonProvider) inflate(item *duroxide.OrchestrationItem, err error) (*duroxide.OrchestrationItem, error) {
	if item != nil {
		if n := p.orchAttempts.Swap(0); n > 0 {
			item.AttemptCount = n
		}
	}
	return item, err
}

func (p *poisonProvider) FetchWorkItem(ctx context.Context, lock, poll time.Duration, s *duroxide.SessionFetchConfig, tags duroxide.TagFilter) (*duroxide.LockedWorkItem, error) {
	item, err := p.Provider.FetchWorkItem(ctx, lock, poll, s, tags)
	if item != nil {
		if n := p.activityAttempts.Load(); n > 0 {
			if exec, ok := item.Item.(duroxide.ActivityExecute); ok && (p.activityName == "" || exec.Name == p.activityName) {
				item.AttemptCount = n
			}
		}
	}
	return item, err
}

func newPoisonHarness(t *testing.T, reg *durable.Registry, maxAttempts uint32) (*harness, *poisonProvider) {
	t.Helper()
	p := &poisonProvider{}
	h := startHarness(t, reg, durable.Options{MaxAttempts: maxAttempts}, false, durabletest.WithProviderWrapper(func(inner duroxide.Provider) duroxide.Provider {
		p.Provider = inner.(*redisprovider.Provider)
		return p
	}))
	return h, p
}

// wantPoison waits for a Poison failure with the given counts and returns it.
func (h *harness) wantPoison(instance string, attempts, max uint32) *duroxide.PoisonError {
	h.t.Helper()
	st := h.wait(instance)
	if st.Status != durable.StatusFailed || st.Failure == nil || st.Failure.Poison == nil {
		h.t.Fatalf("%s: status %v failure %+v; want a Poison failure", instance, st.Status, st.Failure)
	}
	p := st.Failure.Poison
	if p.AttemptCount != attempts || p.MaxAttempts != max {
		h.t.Errorf("%s: poison attempt %d of max %d, want %d of %d", instance, p.AttemptCount, p.MaxAttempts, attempts, max)
	}
	return p
}

// TestE2eOrchestrationItemPoisonFailsOrchestration mirrors
// e2e_orchestration_item_poison_fails_orchestration: the orchestration code never runs.
func TestE2eOrchestrationItemPoisonFailsOrchestration(t *testing.T) {
	t.Parallel()
	var ran atomic.Bool
	reg := durable.NewRegistry().MustAddOrchestration("SimpleOrch", func(*durable.OrchestrationContext, string) (string, error) {
		ran.Store(true)
		return "ran", nil
	})
	h, p := newPoisonHarness(t, reg, 10)
	p.orchAttempts.Store(11)
	h.start("poison-orch-test-1", "SimpleOrch", "{}")
	poison := h.wantPoison("poison-orch-test-1", 11, 10)
	if o := poison.MessageType.Orchestration; o == nil || o.Instance != "poison-orch-test-1" || o.ExecutionID != 1 {
		t.Errorf("poison message type %+v, want Orchestration{poison-orch-test-1, 1}", poison.MessageType)
	}
	if poison.Message == "" {
		t.Error("poison details carry no serialized message")
	}
	if ran.Load() {
		t.Error("the orchestration ran although its message was poison")
	}
}

// TestE2eActivityItemPoisonFailsOrchestration mirrors
// e2e_activity_item_poison_fails_orchestration.
func TestE2eActivityItemPoisonFailsOrchestration(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("TestActivity", constActivity("activity-result")).
		MustAddOrchestration("OrchWithActivity", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("TestActivity", "{}").Get()
		})
	h, p := newPoisonHarness(t, reg, 10)
	p.activityAttempts.Store(11)
	h.start("poison-activity-test-1", "OrchWithActivity", "{}")
	poison := h.wantPoison("poison-activity-test-1", 11, 10)
	if a := poison.MessageType.Activity; a == nil || a.Instance != "poison-activity-test-1" || a.ExecutionID != 1 || a.ActivityName != "TestActivity" || a.ActivityID == 0 {
		t.Errorf("poison message type %+v, want Activity{poison-activity-test-1, 1, TestActivity, id>0}", poison.MessageType)
	}
}

// TestE2eSubOrchestrationPoisonFailsParent mirrors
// e2e_sub_orchestration_poison_fails_parent: the child's poison failure reaches the
// parent as the child's failure, and fails the parent too.
func TestE2eSubOrchestrationPoisonFailsParent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("ChildActivity", constActivity("never")).
		MustAddOrchestration("ParentOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleSubOrchestration("ChildOrch", "{}").Get()
		}).
		MustAddOrchestration("ChildOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("ChildActivity", "{}").Get()
		})
	h, p := newPoisonHarness(t, reg, 10)
	p.activityName = "ChildActivity"
	p.activityAttempts.Store(11)
	h.start("poison-parent", "ParentOrch", "{}")
	h.wantPoison("poison-parent::sub::2", 11, 10)
	st := h.wait("poison-parent")
	if st.Status != durable.StatusFailed {
		t.Fatalf("parent status %v output %q, want Failed", st.Status, st.Output)
	}
}

// TestE2eOnePoisonedActivityAmongMany mirrors e2e_one_poisoned_activity_among_many:
// the first of three sequential activities is poison, the instance fails and the
// later activities are never scheduled.
func TestE2eOnePoisonedActivityAmongMany(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Activity1", constActivity("result1")).
		MustAddActivity("Activity2", constActivity("result2")).
		MustAddActivity("Activity3", constActivity("result3")).
		MustAddOrchestration("MultiActivityOrch", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			for _, name := range []string{"Activity1", "Activity2"} {
				if _, err := ctx.ScheduleActivity(name, "{}").Get(); err != nil {
					return "", err
				}
			}
			return ctx.ScheduleActivity("Activity3", "{}").Get()
		})
	h, p := newPoisonHarness(t, reg, 5)
	p.activityAttempts.Store(6)
	h.start("poison-multi-activity-test", "MultiActivityOrch", "{}")
	h.wantPoison("poison-multi-activity-test", 6, 5)
	if n := countEvents(h.history("poison-multi-activity-test"), "ActivityScheduled"); n != 1 {
		t.Errorf("%d activities scheduled, want only the poisoned first one", n)
	}
}

// TestE2eCustomMaxAttemptsRespected mirrors e2e_custom_max_attempts_respected: with
// MaxAttempts 3, a fourth delivery is poison.
func TestE2eCustomMaxAttemptsRespected(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Simple", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil })
	h, p := newPoisonHarness(t, reg, 3)
	p.orchAttempts.Store(4)
	h.start("poison-custom", "Simple", "")
	h.wantPoison("poison-custom", 4, 3)
}

// TestE2eCustomMaxAttemptsBelowLimitRuns checks the other side of the limit: an item
// at exactly MaxAttempts is still processed normally.
func TestE2eCustomMaxAttemptsBelowLimitRuns(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Simple", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil })
	h, p := newPoisonHarness(t, reg, 3)
	p.orchAttempts.Store(3)
	h.start("poison-at-limit", "Simple", "")
	h.wantCompleted("poison-at-limit", "ok")
}

// TestE2eActivityPoisonsSuborchestrationPoisonsParent mirrors
// e2e_activity_poisons_suborchestration_poisons_parent: a Poison failure travels up
// unchanged through the child into the parent.
func TestE2eActivityPoisonsSuborchestrationPoisonsParent(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Deep", constActivity("never")).
		MustAddOrchestration("Parent", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			r, err := ctx.ScheduleSubOrchestration("Child", "").Get()
			if err != nil {
				return "parent caught: " + err.Error(), nil
			}
			return r, nil
		}).
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			return ctx.ScheduleActivity("Deep", "").Get()
		})
	h, p := newPoisonHarness(t, reg, 10)
	p.activityAttempts.Store(11)
	h.start("poison-chain", "Parent", "")
	h.wantPoison("poison-chain::sub::2", 11, 10)
	h.wantPoison("poison-chain", 11, 10)
}

// TestE2ePoisonMessageCreatesInstanceIfMissing mirrors
// e2e_poison_message_creates_instance_if_missing: a start that is poison on its very
// first fetch still leaves a failed instance with history.
func TestE2ePoisonMessageCreatesInstanceIfMissing(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().MustAddOrchestration("Simple", func(*durable.OrchestrationContext, string) (string, error) { return "ok", nil })
	h, p := newPoisonHarness(t, reg, 10)
	p.orchAttempts.Store(11)
	h.start("poison-new-instance", "Simple", "in")
	h.wantPoison("poison-new-instance", 11, 10)
	hist := h.history("poison-new-instance")
	if started, ok := hist[0].Kind.(duroxide.OrchestrationStartedEvent); !ok || started.Name != "Simple" || started.Input != "in" {
		t.Errorf("first event %+v, want OrchestrationStarted{Simple, in}", hist[0].Kind)
	}
}
