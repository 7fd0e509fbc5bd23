package durable

import (
	"errors"
	"testing"

	"github.com/duroxide-go/duroxide-redis/durable/internal/engine"
	"github.com/duroxide-go/duroxide-redis/duroxide"
)

func TestErrorsPanickedGoBlockIsAPanicError(t *testing.T) {
	t.Parallel()
	d := duroxide.ErrorDetails{Application: &duroxide.ApplicationError{Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorPanicked}, Message: "oh no"}}
	err := publicError(&engine.TaskError{Message: engine.DisplayMessage(d), Details: d}, origin{kind: "go"}, nil)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "oh no" || !errors.Is(err, ErrPanicked) {
		t.Fatalf("err %v (%T)", err, err)
	}
	if err.Error() != "orchestration panicked: oh no" {
		t.Fatalf("message %q, want duroxide's", err.Error())
	}
}

func TestErrorsCancelledChildIsCancelled(t *testing.T) {
	t.Parallel()
	err := error(&ChildError{Name: "Kid", Instance: "k", Details: duroxide.ErrorDetails{Application: &duroxide.ApplicationError{
		Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorCancelled, Reason: "stop"}}}})
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, ErrChildFailed) || errors.Is(err, ErrPanicked) {
		t.Fatalf("cancelled child %v misclassified", err)
	}
}

func TestErrorsNondeterminismFromStatus(t *testing.T) {
	t.Parallel()
	msg := "schedule mismatch: action=CallActivity{name: A} vs event=ActivityScheduled{name: B}"
	st := OrchestrationStatus{Status: StatusFailed, Failure: &duroxide.ErrorDetails{Configuration: &duroxide.ConfigurationError{
		Kind: duroxide.ConfigErrorNondeterminism, Message: &msg}}}
	var ne *NondeterminismError
	if err := st.Err(); !errors.As(err, &ne) || !errors.Is(err, ErrNondeterminism) {
		t.Fatalf("err %v (%T)", err, err)
	}
	if ne.Expected != "CallActivity{name: A}" || ne.Found != "ActivityScheduled{name: B}" || ne.Error() != st.FailureMessage() {
		t.Fatalf("parsed %+v; message %q vs %q", ne, ne.Error(), st.FailureMessage())
	}
	if ne := nondeterminismError("completion kind mismatch for id=7, expected 'a', got 'b'"); ne.EventID != 7 {
		t.Fatalf("event id %d, want 7", ne.EventID)
	}
	// The engine's worded messages (issue 28) parse into the same parts.
	worded := nondeterminismError(`schedule mismatch: event 5 in history is CustomStatusUpdated(status "x"), but the code scheduled activity "Charge" (input "12")`)
	if worded.EventID != 5 || worded.Found != `CustomStatusUpdated(status "x")` || worded.Expected != `scheduled activity "Charge" (input "12")` {
		t.Fatalf("worded message parsed as %+v", worded)
	}
	cancelled := OrchestrationStatus{Status: StatusFailed, Failure: &duroxide.ErrorDetails{Application: &duroxide.ApplicationError{
		Kind: duroxide.AppErrorKind{Variant: duroxide.AppErrorCancelled, Reason: "r"}}}}
	var oe *OrchestrationError
	if err := cancelled.Err(); !errors.As(err, &oe) || !errors.Is(err, ErrCancelled) || err.Error() != "canceled: r" {
		t.Fatalf("cancelled: %v (%T)", err, err)
	}
	if err := (OrchestrationStatus{Status: StatusCompleted}).Err(); err != nil {
		t.Fatalf("completed: %v", err)
	}
}

func TestErrorsNonRetryableMarkRoundTrips(t *testing.T) {
	t.Parallel()
	if NonRetryable(nil) != nil {
		t.Fatal("NonRetryable(nil) is not nil")
	}
	base := errors.New("card declined")
	d := activityFailure(NonRetryable(base))
	if !errors.Is(NonRetryable(base), base) {
		t.Fatal("NonRetryable hides the cause")
	}
	err := publicError(&engine.TaskError{Message: engine.DisplayMessage(d), Details: d}, origin{kind: "activity", name: "Charge"}, nil)
	var ae *ActivityError
	if !errors.As(err, &ae) || ae.Retryable || ae.Message != "card declined" {
		t.Fatalf("err %+v", err)
	}
	plain := activityFailure(base)
	if plain.Application.Message != "card declined" {
		t.Fatalf("a plain failure is recorded as %q, not duroxide's message", plain.Application.Message)
	}
}
