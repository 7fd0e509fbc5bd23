package redisprovider

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// scriptFailure starts the error replies by which scripts report a contract
// violation: "DXPERM <code> <message>" (U.fail in lua/lib_util.lua). An error
// reply reaches the client unchanged, on Redis and miniredis alike.
const scriptFailure = "DXPERM "

// scriptCodes maps each code U.fail may send to the kind of the error it
// becomes (stored data a script cannot read makes it fail, not report: no
// code for ErrUndecodable). TestScriptCodesMatchKinds checks that the
// scripts use exactly these.
var scriptCodes = map[string]error{
	"LOCK_LOST": duroxide.ErrLockLost,
	"NOT_FOUND": duroxide.ErrNotFound,
	"INVALID":   duroxide.ErrInvalidInput,
	"DUPLICATE": duroxide.ErrDuplicateEvent,
	"CONFLICT":  duroxide.ErrConflict,
	"EXISTS":    duroxide.ErrAlreadyExists,
}

// fail turns an error of a Redis call made for operation op into a
// *duroxide.ProviderError (nil stays nil, a ProviderError is kept): a
// script's contract violation gets the kind of its code; transport failures,
// transient server replies and an ended context are retryable
// (ErrUnavailable); anything else is permanent (see classify).
func fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *duroxide.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, scriptFailure); ok {
		code, text, _ := strings.Cut(rest, " ")
		if kind, known := scriptCodes[code]; known {
			return &duroxide.ProviderError{Operation: op, Message: text, Kind: kind}
		}
		return duroxide.Permanent(op, rest) // a script bug: a code without a kind
	}
	retry, kind := classify(err)
	return &duroxide.ProviderError{Operation: op, Message: msg, Retryable: retry, Kind: kind, Err: err}
}

// classify decides whether an error that is not a script's contract
// violation is worth retrying, and its kind.
func classify(err error) (retry bool, kind error) {
	switch {
	case errors.Is(err, redis.ErrClosed):
		// the provider (or the caller, for its own client) closed the client
		return false, duroxide.ErrInvalidInput
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return true, duroxide.ErrUnavailable
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true, duroxide.ErrUnavailable // network, timeouts, pool exhaustion
	}
	if transientReply(err) {
		return true, duroxide.ErrUnavailable
	}
	if redis.HasErrorPrefix(err, "WRONGTYPE") { // no predicate in go-redis
		return false, duroxide.ErrUndecodable // a key holds something no script wrote
	}
	// a refusal retrying cannot change (ACL, auth, a failing script): a
	// configuration problem or a bug, of none of the kinds
	return false, nil
}

// transientReply reports server replies that go away by themselves: the
// server is loading, busy with a script, failing over, redirecting or out of
// memory. go-redis has a predicate for each but BUSY and UNBLOCKED, matched
// by prefix.
func transientReply(err error) bool {
	if _, ok := redis.IsMovedError(err); ok {
		return true
	}
	if _, ok := redis.IsAskError(err); ok {
		return true
	}
	return redis.IsLoadingError(err) || redis.IsTryAgainError(err) ||
		redis.IsMasterDownError(err) || redis.IsReadOnlyError(err) ||
		redis.IsClusterDownError(err) || redis.IsNoReplicasError(err) ||
		redis.IsOOMError(err) || redis.IsMaxClientsError(err) ||
		redis.HasErrorPrefix(err, "BUSY ") || redis.HasErrorPrefix(err, "UNBLOCKED ")
}

// invalid is the error for bad caller input; nothing is written.
func invalid(op, format string, args ...any) error {
	return duroxide.Errorf(op, duroxide.ErrInvalidInput, "invalid input: "+format, args...)
}

// notFound is the error for an unknown instance or execution.
func notFound(op, what string) error {
	return duroxide.Errorf(op, duroxide.ErrNotFound, "%s not found", what)
}

// undecodable is the error for stored data (or a reply built from it) that
// cannot be decoded.
func undecodable(op, format string, args ...any) error {
	return duroxide.Errorf(op, duroxide.ErrUndecodable, format, args...)
}

// checkToken rejects an empty lock token before any round trip: no lock has
// it.
func checkToken(op, token string) error {
	if token == "" {
		return duroxide.Errorf(op, duroxide.ErrLockLost, "lock_token is empty")
	}
	return nil
}
