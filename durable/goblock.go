package durable

import "github.com/duroxide-go/duroxide-redis/durable/internal/engine"

// Go starts fn as a block of this orchestration that runs concurrently with
// the code that started it, the way an async block runs inside duroxide's
// select or join: fn runs only while something waits on the returned future
// (Get, Select, Join or IsReady), in the order those waits poll it, so the
// history it writes is deterministic. Use it to race or join whole sequences
// of steps, e.g. a retried activity against a deadline:
//
//	charge := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
//		return ctx.ScheduleActivityWithRetry("Charge", in, policy).Get()
//	})
//	if ctx.Select(charge, ctx.Timer(time.Minute)) == 1 { ... }
//
// fn must use the ctx it is given, not the outer one. Cancelling the future
// (a lost Select, or the orchestration returning first) cancels everything
// fn still waits for and never resumes it. A panic in fn fails the instance;
// Get on the future then returns a *PanicError.
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext) (string, error)) Future[string] {
	return rawFuture(c.c.Go(func(block *engine.Context) (string, error) {
		return fn(&OrchestrationContext{c: block})
	}), origin{kind: "go"})
}
