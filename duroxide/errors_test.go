package duroxide

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestProviderErrorConstructors(t *testing.T) {
	r := Retryable("fetch_work_item", "connection refused")
	if !r.Retryable || r.Operation != "fetch_work_item" || r.Message != "connection refused" || r.Err != nil {
		t.Errorf("Retryable built %#v", r)
	}
	p := Permanent("ack_work_item", "lock_token x is invalid or expired")
	if p.Retryable || p.Operation != "ack_work_item" {
		t.Errorf("Permanent built %#v", p)
	}
	if got := p.Error(); got != "ack_work_item: lock_token x is invalid or expired" {
		t.Errorf("Error() = %q", got)
	}
	var nilErr *ProviderError
	if nilErr.Error() != "<nil>" || nilErr.Unwrap() != nil {
		t.Error("nil *ProviderError must not panic")
	}
}

func TestIsRetryable(t *testing.T) {
	retry := Retryable("op", "busy")
	perm := Permanent("op", "bad token")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain error", errors.New("boom"), false},
		{"retryable", retry, true},
		{"permanent", perm, false},
		{"wrapped once", fmt.Errorf("fetch: %w", retry), true},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", retry)), true},
		{"permanent wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", perm)), false},
		{"joined", errors.Join(errors.New("x"), retry), true},
		{"typed nil", (*ProviderError)(nil), false},
		{"retryable cause inside permanent", &ProviderError{Operation: "op", Err: retry}, false},
	}
	for _, tc := range tests {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("%s: IsRetryable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestProviderErrorUnwrapAndAs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pe := Retryable("fetch_orchestration_item", "cancelled")
	pe.Err = ctx.Err()
	wrapped := fmt.Errorf("dispatcher: %w", fmt.Errorf("poll: %w", pe))

	if !errors.Is(wrapped, context.Canceled) {
		t.Error("errors.Is does not reach the cause")
	}
	if errors.Is(wrapped, io.EOF) {
		t.Error("errors.Is matched an unrelated error")
	}
	var got *ProviderError
	if !errors.As(wrapped, &got) || got != pe {
		t.Fatalf("errors.As = %v", got)
	}
	if got.Unwrap() != context.Canceled {
		t.Errorf("Unwrap = %v", got.Unwrap())
	}
	if Permanent("op", "m").Unwrap() != nil {
		t.Error("Unwrap without cause must be nil")
	}
}
