package durable_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide-go/duroxide-redis/durable"
	"github.com/duroxide-go/duroxide-redis/durable/durabletest"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// Ports of duroxide's tests/async_block_tests.rs: Rust async blocks raced
// and joined by select/join are ctx.Go blocks here. duroxide decides its
// races with activity sleeps (5ms against 200ms); these decide them by
// construction: a losing activity blocks until its context is cancelled, so
// it cannot finish first.

// prefixActivity answers "<prefix>:<input>".
func prefixActivity(prefix string) durable.ActivityFunc {
	return func(_ *durable.ActivityContext, in string) (string, error) { return prefix + ":" + in, nil }
}

// untilCancelled blocks until its context ends, so it loses every race.
func untilCancelled(ctx *durable.ActivityContext, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// seq runs activity name over inputs in order, returning the results.
func seq(ctx *durable.OrchestrationContext, name string, inputs ...string) ([]string, error) {
	var out []string
	for _, in := range inputs {
		r, err := ctx.ScheduleActivity(name, in).Get()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// winner formats a select's result as duroxide's tests do.
func winner(idx int, f durable.Future[string]) (string, error) {
	r, err := f.Get()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("winner:%d,result:%s", idx, r), nil
}

// joined gets every block's value, joined by ",".
func joined(ctx *durable.OrchestrationContext, fs ...durable.Future[string]) (string, error) {
	aw := make([]durable.Awaitable, len(fs))
	for i, f := range fs {
		aw[i] = f
	}
	ctx.Join(aw...)
	out := make([]string, len(fs))
	for i, f := range fs {
		r, err := f.Get()
		if err != nil {
			return "", err
		}
		out[i] = r
	}
	return strings.Join(out, ","), nil
}

// runBlocks runs orchestration "P" of reg and returns its completed output.
func runBlocks(t *testing.T, reg *durable.Registry, instance, input string) (*durabletest.Env, string) {
	t.Helper()
	env := durabletest.Start(t, reg, durabletest.WithOptions(durable.Options{
		LongPollTimeout: 100 * time.Millisecond, OrchestrationConcurrency: 4, WorkerConcurrency: 4}))
	st := env.StartAndWait(t, instance, "P", input)
	if st.Status != durable.StatusCompleted {
		t.Fatalf("status %v: %s", st.Status, st.FailureMessage())
	}
	return env, st.Output
}

func wantContains(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("output %q lacks %q", out, p)
		}
	}
}

// TestAsyncBlockJoinWithControlFlow mirrors async_block_join_with_control_flow.
func TestAsyncBlockJoinWithControlFlow(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Step", prefixActivity("step")).
		MustAddActivity("Check", prefixActivity("check")).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			a := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				first, err := ctx.ScheduleActivity("Step", "A1").Get()
				if err != nil {
					return "", err
				}
				if !strings.Contains(first, "step") {
					return "A:fallback", nil
				}
				second, err := ctx.ScheduleActivity("Step", "A2").Get()
				return "A:[" + first + "," + second + "]", err
			})
			b := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				check, err := ctx.ScheduleActivity("Check", "B1").Get()
				if err != nil {
					return "", err
				}
				steps, err := seq(ctx, "Step", "B2", "B3")
				return "B:[" + strings.Join(append([]string{check}, steps...), ",") + "]", err
			})
			c := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				if _, err := ctx.Timer(5 * time.Millisecond).Get(); err != nil {
					return "", err
				}
				r, err := ctx.ScheduleActivity("Step", "C1").Get()
				return "C:[timer," + r + "]", err
			})
			return joined(ctx, a, b, c)
		})
	_, out := runBlocks(t, reg, "join-blocks-1", "")
	if out != "A:[step:A1,step:A2],B:[check:B1,step:B2,step:B3],C:[timer,step:C1]" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockJoinMany mirrors async_block_join_many: results come back in
// block order whatever order the blocks finish in.
func TestAsyncBlockJoinMany(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Work", prefixActivity("done")).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			var blocks []durable.Future[string]
			for i := range 5 {
				blocks = append(blocks, ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
					r, err := ctx.ScheduleActivity("Work", fmt.Sprint((5-i)*5)).Get()
					return fmt.Sprintf("block%d:%s", i, r), err
				}))
			}
			return joined(ctx, blocks...)
		})
	_, out := runBlocks(t, reg, "join-many-1", "")
	if out != "block0:done:25,block1:done:20,block2:done:15,block3:done:10,block4:done:5" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockSequential mirrors async_block_sequential: blocks awaited one
// after another, each using the previous one's result.
func TestAsyncBlockSequential(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Process", prefixActivity("processed")).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			p1, err := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "Process", in, "extra")
				return strings.Join(r, "+"), err
			}).Get()
			if err != nil {
				return "", err
			}
			p2, err := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				return ctx.ScheduleActivity("Process", p1).Get()
			}).Get()
			if err != nil {
				return "", err
			}
			return ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				if _, err := ctx.Timer(5 * time.Millisecond).Get(); err != nil {
					return "", err
				}
				r, err := ctx.ScheduleActivity("Process", p2).Get()
				return "final:" + r, err
			}).Get()
		})
	_, out := runBlocks(t, reg, "seq-blocks-1", "start")
	if out != "final:processed:processed:processed:start+processed:extra" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockSelectRacing mirrors async_block_select_racing.
func TestAsyncBlockSelectRacing(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Fast", prefixActivity("fast")).
		MustAddActivity("Slow", untilCancelled).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			fast := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "Fast", "1", "2")
				return "fast_block:[" + strings.Join(r, ",") + "]", err
			})
			slow := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "Slow", "1", "2")
				return "slow_block:[" + strings.Join(r, ",") + "]", err
			})
			i := ctx.Select(fast, slow)
			return winner(i, []durable.Future[string]{fast, slow}[i])
		})
	_, out := runBlocks(t, reg, "race-blocks-1", "")
	if out != "winner:0,result:fast_block:[fast:1,fast:2]" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockVsDurableFuture mirrors async_block_vs_durable_future: a plain
// activity future raced against a multi-step block.
func TestAsyncBlockVsDurableFuture(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Quick", prefixActivity("quick")).
		MustAddActivity("Multi", untilCancelled).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			single := ctx.ScheduleActivity("Quick", "single")
			block := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "Multi", "1", "2")
				return "block:[" + strings.Join(r, ",") + "]", err
			})
			i := ctx.Select(single, block)
			return winner(i, []durable.Future[string]{single, block}[i])
		})
	_, out := runBlocks(t, reg, "block-vs-future-1", "")
	if out != "winner:0,result:quick:single" {
		t.Fatalf("output %q", out)
	}
}

// timerThen is a block that sleeps d, then runs Work with input label.
func timerThen(d time.Duration, label string) func(ctx *durable.OrchestrationContext) (string, error) {
	return func(ctx *durable.OrchestrationContext) (string, error) {
		if _, err := ctx.Timer(d).Get(); err != nil {
			return "", err
		}
		r, err := ctx.ScheduleActivity("Work", label).Get()
		return label + ":" + r, err
	}
}

// TestAsyncBlockSelect3WithTimers mirrors async_block_select3_with_timers: the
// block with the shortest timer wins.
func TestAsyncBlockSelect3WithTimers(t *testing.T) {
	t.Parallel()
	// Only A's activity answers: the blocks of the longer timers would
	// otherwise race A's activity once their timers fire too.
	reg := durable.NewRegistry().
		MustAddActivity("Work", func(ctx *durable.ActivityContext, in string) (string, error) {
			if in != "A" {
				return untilCancelled(ctx, in)
			}
			return "work:" + in, nil
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			fs := []durable.Future[string]{
				ctx.Go(timerThen(10*time.Millisecond, "A")),
				ctx.Go(timerThen(500*time.Millisecond, "B")),
				ctx.Go(timerThen(100*time.Millisecond, "C")),
			}
			i := ctx.Select(fs[0], fs[1], fs[2])
			return winner(i, fs[i])
		})
	_, out := runBlocks(t, reg, "select3-timers-1", "")
	if out != "winner:0,result:A:work:A" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockNestedJoinInSelect mirrors async_block_nested_join_in_select: a
// block joining three activities beats a 2s timeout.
func TestAsyncBlockNestedJoinInSelect(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Step", prefixActivity("step")).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			timeout := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				_, err := ctx.Timer(2 * time.Second).Get()
				return "timeout", err
			})
			work := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := joined(ctx, ctx.ScheduleActivity("Step", "1"), ctx.ScheduleActivity("Step", "2"), ctx.ScheduleActivity("Step", "3"))
				return "work:[" + r + "]", err
			})
			i := ctx.Select(work, timeout)
			return winner(i, []durable.Future[string]{work, timeout}[i])
		})
	_, out := runBlocks(t, reg, "nested-join-select-1", "")
	if out != "winner:0,result:work:[step:1,step:2,step:3]" {
		t.Fatalf("output %q", out)
	}
}

// TestAsyncBlockSuborchestrationWinsRace mirrors async_block_suborchestration_wins_race.
func TestAsyncBlockSuborchestrationWinsRace(t *testing.T) {
	t.Parallel()
	var childDone atomic.Int32
	reg := durable.NewRegistry().
		MustAddActivity("FastWork", prefixActivity("fast")).
		MustAddActivity("SlowWork", untilCancelled).
		MustAddOrchestration("FastChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := ctx.ScheduleActivity("FastWork", in).Get()
			if err == nil && !ctx.IsReplaying() {
				childDone.Add(1)
			}
			return "child:" + r, err
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			sub := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				s, err := ctx.ScheduleSubOrchestration("FastChild", "sub-input").Get()
				if err != nil {
					return "", err
				}
				a, err := ctx.ScheduleActivity("FastWork", "after-sub").Get()
				return "blockA:[" + s + "," + a + "]", err
			})
			slow := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "SlowWork", "1", "2")
				return "blockB:[" + strings.Join(r, ",") + "]", err
			})
			i := ctx.Select(sub, slow)
			return winner(i, []durable.Future[string]{sub, slow}[i])
		})
	_, out := runBlocks(t, reg, "suborchestration-wins-1", "")
	if out != "winner:0,result:blockA:[child:fast:sub-input,fast:after-sub]" {
		t.Fatalf("output %q", out)
	}
	if n := childDone.Load(); n != 1 {
		t.Fatalf("child completed %d times, want 1", n)
	}
}

// childOf returns the instance id of the first sub-orchestration named name
// that instance scheduled.
func childOf(t *testing.T, env *durabletest.Env, instance, name string) string {
	t.Helper()
	for _, e := range read(t, env, instance) {
		if s, ok := e.Kind.(duroxide.SubOrchestrationScheduledEvent); ok && s.Name == name {
			if strings.HasPrefix(s.Instance, "sub::") { // an auto id is relative to its parent
				return instance + "::" + s.Instance
			}
			return s.Instance
		}
	}
	t.Fatalf("%s scheduled no %s", instance, name)
	return ""
}

// wantNotCompleted checks that a child that lost its parent's race ends
// without completing: its activity can only end by cancellation.
func wantNotCompleted(t *testing.T, env *durabletest.Env, child string) {
	t.Helper()
	if st := env.Wait(t, child); st.Status == durable.StatusCompleted {
		t.Fatalf("child %s completed (%q) though it lost the race", child, st.Output)
	}
}

// TestAsyncBlockSuborchestrationLosesRace mirrors async_block_suborchestration_loses_race:
// the losing block's child is cancelled, never completed.
func TestAsyncBlockSuborchestrationLosesRace(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Fast", prefixActivity("fast")).
		MustAddActivity("VerySlow", untilCancelled).
		MustAddOrchestration("SlowChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := seq(ctx, "VerySlow", in+"-1", in+"-2")
			return "child:[" + strings.Join(r, ",") + "]", err
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			sub := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				s, err := ctx.ScheduleSubOrchestration("SlowChild", "sub-input").Get()
				return "blockA:" + s, err
			})
			fast := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := seq(ctx, "Fast", "1", "2")
				return "blockB:[" + strings.Join(r, ",") + "]", err
			})
			i := ctx.Select(sub, fast)
			return winner(i, []durable.Future[string]{sub, fast}[i])
		})
	env, out := runBlocks(t, reg, "suborchestration-loses-1", "")
	if out != "winner:1,result:blockB:[fast:1,fast:2]" {
		t.Fatalf("output %q", out)
	}
	wantNotCompleted(t, env, childOf(t, env, "suborchestration-loses-1", "SlowChild"))
}

// TestAsyncBlockMultipleSuborchestrationsJoined mirrors
// async_block_multiple_suborchestrations_joined.
func TestAsyncBlockMultipleSuborchestrationsJoined(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Transform", prefixActivity("transformed")).
		MustAddOrchestration("ChildA", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := ctx.ScheduleActivity("Transform", "A-"+in).Get()
			return "childA:" + r, err
		}).
		MustAddOrchestration("ChildB", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := seq(ctx, "Transform", "B1-"+in, "B2-"+in)
			return "childB:[" + strings.Join(r, ",") + "]", err
		}).
		MustAddOrchestration("ChildC", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			if _, err := ctx.Timer(5 * time.Millisecond).Get(); err != nil {
				return "", err
			}
			r, err := ctx.ScheduleActivity("Transform", "C-"+in).Get()
			return "childC:timer+" + r, err
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			b1 := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				s, err := ctx.ScheduleSubOrchestration("ChildA", in).Get()
				if err != nil {
					return "", err
				}
				a, err := ctx.ScheduleActivity("Transform", "block1-extra").Get()
				return "block1:[" + s + "," + a + "]", err
			})
			b2 := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				s, err := ctx.ScheduleSubOrchestration("ChildB", in).Get()
				return "block2:" + s, err
			})
			b3 := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				a, err := ctx.ScheduleActivity("Transform", "block3-first").Get()
				if err != nil {
					return "", err
				}
				s, err := ctx.ScheduleSubOrchestration("ChildC", in).Get()
				return "block3:[" + a + "," + s + "]", err
			})
			return joined(ctx, b1, b2, b3)
		})
	_, out := runBlocks(t, reg, "join-suborchestration-1", "data")
	want := "block1:[childA:transformed:A-data,transformed:block1-extra]," +
		"block2:childB:[transformed:B1-data,transformed:B2-data]," +
		"block3:[transformed:block3-first,childC:timer+transformed:C-data]"
	if out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}

// TestAsyncBlockSuborchestrationRacingTimeout mirrors
// async_block_suborchestration_racing_timeout: of a fast child, a slow child
// and a timeout, the fast child wins and the slow one never completes.
func TestAsyncBlockSuborchestrationRacingTimeout(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Work", prefixActivity("work")).
		MustAddActivity("SlowWork", untilCancelled).
		MustAddOrchestration("FastChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := ctx.ScheduleActivity("Work", in).Get()
			return "fast-child:" + r, err
		}).
		MustAddOrchestration("SlowChild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := ctx.ScheduleActivity("SlowWork", in).Get()
			return "slow-child:" + r, err
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, _ string) (string, error) {
			fs := []durable.Future[string]{
				ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
					s, err := ctx.ScheduleSubOrchestration("FastChild", "fast-input").Get()
					return "blockA:" + s, err
				}),
				ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
					s, err := ctx.ScheduleSubOrchestration("SlowChild", "slow-input").Get()
					return "blockB:" + s, err
				}),
				ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
					_, err := ctx.Timer(2 * time.Second).Get()
					return "blockC:timeout", err
				}),
			}
			i := ctx.Select(fs[0], fs[1], fs[2])
			return winner(i, fs[i])
		})
	env, out := runBlocks(t, reg, "timeout-race-1", "")
	if out != "winner:0,result:blockA:fast-child:work:fast-input" {
		t.Fatalf("output %q", out)
	}
	wantNotCompleted(t, env, childOf(t, env, "timeout-race-1", "SlowChild"))
}

// TestAsyncBlockNestedSuborchestrationChain mirrors
// async_block_nested_suborchestration_chain: parent blocks joining children
// that join grandchildren.
func TestAsyncBlockNestedSuborchestrationChain(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry().
		MustAddActivity("Leaf", prefixActivity("leaf")).
		MustAddOrchestration("Grandchild", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := ctx.ScheduleActivity("Leaf", in).Get()
			return "grandchild:" + r, err
		}).
		MustAddOrchestration("Child", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			r, err := joined(ctx, ctx.ScheduleSubOrchestration("Grandchild", "gc-"+in), ctx.ScheduleActivity("Leaf", "child-"+in))
			return "child:[" + r + "]", err
		}).
		MustAddOrchestration("P", func(ctx *durable.OrchestrationContext, in string) (string, error) {
			c1 := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				r, err := ctx.ScheduleSubOrchestration("Child", "c1-"+in).Get()
				return "block1:" + r, err
			})
			c2 := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
				if _, err := ctx.Timer(5 * time.Millisecond).Get(); err != nil {
					return "", err
				}
				r, err := ctx.ScheduleSubOrchestration("Child", "c2-"+in).Get()
				return "block2:timer+" + r, err
			})
			return joined(ctx, c1, c2)
		})
	_, out := runBlocks(t, reg, "nested-chain-1", "root")
	want := "block1:child:[grandchild:leaf:gc-c1-root,leaf:child-c1-root]," +
		"block2:timer+child:[grandchild:leaf:gc-c2-root,leaf:child-c2-root]"
	if out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}
