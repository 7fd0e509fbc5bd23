// Live progress for long points: on a terminal one line rewritten in place,
// elsewhere (CI logs, pipes) a line every few seconds and only for points
// long enough to need one, so smoke output stays short.

package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

type progress struct {
	w       io.Writer
	enabled bool
	tty     bool
	mu      sync.Mutex // one line at a time
}

func newProgress(w io.Writer, enabled bool) *progress {
	p := &progress{w: w, enabled: enabled}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// track shows label with the elapsed time out of total (0: unknown) and the
// count so far, until the returned stop is called.
func (p *progress) track(label string, total time.Duration, count func() int64) (stop func()) {
	if !p.enabled {
		return func() {}
	}
	every := 5 * time.Second
	if p.tty {
		every = 250 * time.Millisecond
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if p.tty {
					p.print("\r\033[K")
				}
				return
			case <-t.C:
				el := time.Since(start)
				line := fmt.Sprintf("   .. %s  %.1fs", label, el.Seconds())
				if total > 0 {
					line += fmt.Sprintf("/%.1fs", total.Seconds())
				}
				if count != nil {
					n := count()
					line += fmt.Sprintf("  %d ops", n)
				}
				if p.tty {
					p.print("\r\033[K" + line)
				} else {
					p.print(line + "\n")
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (p *progress) print(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, s)
}
