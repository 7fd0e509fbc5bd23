package durable

// Go starts fn as a block of this orchestration that runs concurrently with
// the code that started it, the way an async block runs inside duroxide's
// select or join: fn runs only while something waits on the returned future
// (Get, Select, Join or IsReady), in the order those waits poll it, so the
// history it writes is deterministic. Use it to race or join whole sequences
// of steps, e.g. a retried activity against a deadline:
//
//	charge := ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) {
//		return ctx.ScheduleActivityWithRetry("Charge", in, policy)
//	})
//	if ctx.Select(charge, ctx.Timer(time.Minute)) == 1 { ... }
//
// fn must use the ctx it is given, not the outer one. Cancelling the future
// (a lost Select, or the orchestration returning first) cancels everything
// fn still waits for and never resumes it. A panic in fn fails the instance.
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext) (string, error)) Future[string] {
	co := c.co.child() // stopped with the turn's other coroutines
	block := &OrchestrationContext{
		st: c.st, co: co, instance: c.instance, execution: c.execution,
		name: c.name, version: c.version, clock: c.clock, logger: c.logger,
	}
	co.start(func() (string, error) { return fn(block) })
	f := &future{ctx: c, kind: kindGo, block: block}
	f.check = func() (string, error, bool) {
		if !co.poll() {
			return "", nil, false
		}
		// Returning drops the block's pending futures, as leaving an async
		// block drops its locals.
		block.cancelPending()
		if co.panicMsg != nil {
			if c.st.panicMsg == nil {
				c.st.panicMsg = co.panicMsg
			}
			return "", &TaskError{Message: "orchestration panicked: " + *co.panicMsg}, true
		}
		return co.output, co.err, true
	}
	c.futures = append(c.futures, f)
	return Future[string]{f: f, decode: rawDecode}
}

// cancelPending cancels every future this context created that has not
// resolved (Go blocks recursively).
func (c *OrchestrationContext) cancelPending() {
	for _, f := range c.futures {
		f.cancel()
	}
}
