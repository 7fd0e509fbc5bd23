package durable

import (
	"fmt"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// The runtime remembers executions only as far as parentExecution needs:
// the map must not grow with every instance ever processed, and a parent it
// forgot gets the same answer as one it never ran.
func TestExecutionIDsStayBounded(t *testing.T) {
	t.Parallel()
	r, err := newRuntime(&turnRecorder{}, NewRegistry(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5 * maxRememberedExecutions
	for i := range n {
		r.rememberExecution(fmt.Sprintf("i%d", i), 2, false)
	}
	if got := r.execs.len(); got > maxRememberedExecutions {
		t.Fatalf("%d instances remembered after %d were processed", got, n)
	}
	if got := r.parentExecution(fmt.Sprintf("i%d", n-1)); got != 2 {
		t.Fatalf("the latest parent's execution %d, want 2", got)
	}
	if got := r.parentExecution("i0"); got != duroxide.InitialExecutionID {
		t.Fatalf("a forgotten parent's execution %d, want the first", got)
	}
	// A parent on its first execution, or whose execution ended, needs no
	// entry: the fallback answers for it.
	before := r.execs.len()
	r.rememberExecution("first", duroxide.InitialExecutionID, false)
	r.rememberExecution(fmt.Sprintf("i%d", n-1), 2, true)
	r.rememberExecution(fmt.Sprintf("i%d", n-2), 3, false)
	if got := r.execs.len(); got != before-1 {
		t.Fatalf("%d remembered, want %d", got, before-1)
	}
	if got := r.parentExecution(fmt.Sprintf("i%d", n-2)); got != 3 {
		t.Fatalf("a continued parent's execution %d, want 3", got)
	}
}
