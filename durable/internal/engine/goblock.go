package engine

import "github.com/duroxide-go/duroxide-redis/duroxide"

// Go starts fn as a block of this orchestration that runs concurrently with
// the code that started it, the way an async block runs inside duroxide's
// select or join: fn runs only while something waits on the returned future,
// in the order those waits poll it, so the history it writes is
// deterministic. Cancelling the future cancels everything fn still waits for
// and never resumes it; a panic in fn fails the instance.
func (c *Context) Go(fn func(ctx *Context) (string, error)) *Future {
	co := c.co.child() // stopped with the turn's other coroutines
	block := &Context{
		st: c.st, co: co, instance: c.instance, execution: c.execution,
		name: c.name, version: c.version, clock: c.clock, logger: c.logger,
	}
	co.start(func() (string, error) { return fn(block) })
	f := &Future{ctx: c, kind: kindGo, block: block}
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
			return "", failure(appFailure(duroxide.AppErrorPanicked, "", *co.panicMsg)), true
		}
		return co.output, co.err, true
	}
	c.futures = append(c.futures, f)
	return f
}

// cancelPending cancels every future this context created that has not
// resolved (Go blocks recursively).
func (c *Context) cancelPending() {
	for _, f := range c.futures {
		f.cancel()
	}
}
