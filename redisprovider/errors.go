package redisprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// permanentCode prefixes the error replies by which scripts report contract
// violations (redis.error_reply reaches the client unchanged).
const permanentCode = "DXPERM "

// transientReplies are server error codes that go away by themselves: the
// server is loading, busy with a script, failing over or out of memory.
var transientReplies = []string{
	"LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "CLUSTERDOWN",
	"MOVED", "ASK", "NOREPLICAS", "OOM", "UNBLOCKED",
	"ERR max number of clients",
}

// fail turns an error of a Redis call made for operation op into a
// *duroxide.ProviderError: contract violations reported by a script are
// permanent, transport and transient server failures retryable, a closed
// provider and unexpected server replies (a script bug) permanent.
func (p *Provider) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *duroxide.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, permanentCode); ok {
		return duroxide.Permanent(op, rest)
	}
	return &duroxide.ProviderError{Operation: op, Message: msg, Retryable: retryable(err), Err: err}
}

// retryable classifies an error that is not a contract violation.
func retryable(err error) bool {
	switch {
	case errors.Is(err, redis.ErrClosed):
		return false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true // network, timeouts, pool exhaustion
	}
	for _, code := range transientReplies {
		if redis.HasErrorPrefix(err, code) {
			return true
		}
	}
	return false
}

// invalid is the permanent error for bad caller input; nothing is written.
func invalid(op, format string, args ...any) error {
	return duroxide.Permanent(op, "invalid input: "+fmt.Sprintf(format, args...))
}
