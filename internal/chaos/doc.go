// Package chaos holds the reliability tests of the Redis provider: a small
// test runtime that drives any duroxide.Provider the way duroxide's
// dispatchers do (fetch, run, ack) while injecting faults, an invariant
// checker, and the tests that run them against redis-server processes they
// start, crash, restart and disturb themselves.
//
// The runtime emulates one orchestration shape, fan-out / fan-in, purely from
// history and replays no user code: its first turn schedules FanOut
// activities, later turns record each ActivityCompleted message as an event,
// and the turn that sees every result completes the instance. It records
// what it is given without deduplicating, so a message delivered twice by the
// provider shows up as a duplicate event that the checker reports.
//
// The invariants (see Checker): every orchestration completes exactly once;
// every activity result is recorded exactly once in history and is the one
// whose worker ack returned nil; no instance or activity is ever held by two
// lock holders at once; every ack that returned nil is present afterwards
// byte for byte; every call returns nil, a retryable *duroxide.ProviderError,
// a context error or an expected lock_token error, within its deadline plus a
// small grace.
package chaos
