package redisprovider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// serverError returns the error go-redis makes of the server reply msg, so
// the predicates see the types they were written for.
func serverError(t *testing.T, msg string) error {
	t.Helper()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	m.SetError(msg)
	err := rdb.Get(context.Background(), "k").Err()
	if err == nil {
		t.Fatalf("miniredis did not return %q", msg)
	}
	return err
}

// Every failure gets the kind callers branch on, and the retryable ones are
// exactly those that can go away by themselves.
func TestFailClassifies(t *testing.T) {
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	closed.Close()
	cases := []struct {
		name  string
		err   error
		retry bool
		kind  error
	}{
		{"lock lost", errors.New("DXPERM LOCK_LOST lock_token t is invalid"), false, duroxide.ErrLockLost},
		{"not found", errors.New("DXPERM NOT_FOUND instance i not found"), false, duroxide.ErrNotFound},
		{"invalid", errors.New("DXPERM INVALID key k is outside the namespace"), false, duroxide.ErrInvalidInput},
		{"duplicate", errors.New("DXPERM DUPLICATE event_id 3 ..."), false, duroxide.ErrDuplicateEvent},
		{"conflict", errors.New("DXPERM CONFLICT instance i is Running"), false, duroxide.ErrConflict},
		{"unknown code", errors.New("DXPERM NOPE something"), false, nil},
		{"canceled", context.Canceled, true, duroxide.ErrUnavailable},
		{"deadline", context.DeadlineExceeded, true, duroxide.ErrUnavailable},
		{"network", errors.New("dial tcp: connection refused"), true, duroxide.ErrUnavailable},
		{"closed client", closed.Ping(context.Background()).Err(), false, duroxide.ErrInvalidInput},
		{"loading", serverError(t, "LOADING Redis is loading the dataset in memory"), true, duroxide.ErrUnavailable},
		{"busy", serverError(t, "BUSY Redis is busy running a script"), true, duroxide.ErrUnavailable},
		{"tryagain", serverError(t, "TRYAGAIN Multiple keys request during rehashing of slot"), true, duroxide.ErrUnavailable},
		{"readonly", serverError(t, "READONLY You can't write against a read only replica."), true, duroxide.ErrUnavailable},
		{"moved", serverError(t, "MOVED 3999 127.0.0.1:6381"), true, duroxide.ErrUnavailable},
		{"oom", serverError(t, "OOM command not allowed when used memory > 'maxmemory'."), true, duroxide.ErrUnavailable},
		{"unblocked", serverError(t, "UNBLOCKED client unblocked via CLIENT UNBLOCK"), true, duroxide.ErrUnavailable},
		{"max clients", serverError(t, "ERR max number of clients reached"), true, duroxide.ErrUnavailable},
		{"wrongtype", serverError(t, "WRONGTYPE Operation against a key holding the wrong kind of value"), false, duroxide.ErrUndecodable},
		{"busykey", serverError(t, "BUSYKEY Target key name already exists."), false, nil},
		{"noperm", serverError(t, "NOPERM this user has no permissions to run the 'evalsha' command"), false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := fail("op_name", c.err)
			var pe *duroxide.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("fail(%v) = %T, want *duroxide.ProviderError", c.err, err)
			}
			if pe.Operation != "op_name" || pe.Retryable != c.retry || pe.Kind != c.kind {
				t.Fatalf("fail(%v) = op %q retryable %v kind %v, want op_name %v %v", c.err, pe.Operation, pe.Retryable, pe.Kind, c.retry, c.kind)
			}
			if c.kind != nil && !errors.Is(err, c.kind) {
				t.Fatalf("errors.Is(%v, %v) = false", err, c.kind)
			}
		})
	}
	if err := fail("op", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call's error %v does not match context.Canceled", err)
	}
	if got := fail("op", errors.New("DXPERM LOCK_LOST lock_token t is invalid")).Error(); got != "op: lock_token t is invalid" {
		t.Fatalf("script failure message %q, want the operation and the script's text without its code", got)
	}
}

// The codes the scripts send (U.fail('<CODE>', ...)) are exactly those
// fail maps to a kind: a code it does not know would reach callers without
// one.
func TestScriptCodesMatchKinds(t *testing.T) {
	files, err := filepath.Glob("../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Lua files found: %v", err)
	}
	call := regexp.MustCompile(`U\.fail\(\s*'([A-Z_]+)'`)
	used := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			used[m[1]] = true
			if scriptCodes[m[1]] == nil {
				t.Errorf("%s: code %s has no kind in scriptCodes", filepath.Base(f), m[1])
			}
		}
	}
	for code := range scriptCodes {
		if !used[code] {
			t.Errorf("scriptCodes maps %s, which no script sends", code)
		}
	}
}
