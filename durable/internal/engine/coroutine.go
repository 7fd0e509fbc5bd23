package engine

import (
	"fmt"
	"runtime"
)

// coroutine runs orchestration code on its own goroutine, but only while the
// engine waits for it: control passes back and forth over unbuffered
// channels, so exactly one of the two runs at a time and no locking is needed
// on the context state. Blocking on an unresolved future yields to the
// engine; the engine resumes the code only once that future can resolve,
// which is what polling a Rust future does.
type coroutine struct {
	resume  chan bool     // engine -> code: true = run on, false = exit
	yielded chan struct{} // code -> engine: blocked, finished or exited
	waitFor func() bool   // what the blocked code waits for
	started bool
	exited  bool

	finished bool // the function returned (or panicked)
	output   string
	err      error
	panicMsg *string
}

func newCoroutine() *coroutine {
	return &coroutine{resume: make(chan bool), yielded: make(chan struct{})}
}

// start launches fn; it runs only when the engine first polls.
func (c *coroutine) start(fn func() (string, error)) {
	c.started = true
	go func() {
		defer close(c.yielded)
		if !<-c.resume {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				msg := PanicMessage(r)
				c.panicMsg = &msg
				c.finished = true
			}
		}()
		out, err := fn()
		c.output, c.err, c.finished = out, err, true
	}()
}

// poll runs the code until it blocks again, if what it waits for is ready.
// It reports whether the code has finished.
func (c *coroutine) poll() bool {
	if c.finished || c.exited {
		return c.finished
	}
	if c.waitFor != nil && !c.waitFor() {
		return false
	}
	c.waitFor = nil
	c.resume <- true
	if _, ok := <-c.yielded; !ok {
		c.exited = true
	}
	return c.finished
}

// block is called on the code's goroutine: it returns once ready() holds,
// yielding to the engine in between. When the turn ends first, the goroutine
// exits here (runtime.Goexit runs the code's defers but cannot be recovered).
func (c *coroutine) block(ready func() bool) {
	for !ready() {
		c.waitFor = ready
		c.yielded <- struct{}{}
		if !<-c.resume {
			runtime.Goexit()
		}
	}
}

// stop ends a coroutine that is still blocked, and waits until its goroutine
// is gone, so a turn that ends blocked leaks nothing.
func (c *coroutine) stop() {
	if !c.started || c.exited {
		return
	}
	c.exited = true
	if c.finished {
		<-c.yielded
		return
	}
	c.resume <- false
	for range c.yielded {
	}
}

// PanicMessage renders a recovered panic value as duroxide records it.
func PanicMessage(r any) string {
	switch v := r.(type) {
	case string:
		return v
	case error:
		return v.Error()
	default:
		return fmt.Sprint(v)
	}
}
