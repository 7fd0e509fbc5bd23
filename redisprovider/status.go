package redisprovider

import (
	"context"
	"strconv"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// GetCustomStatus returns the instance's custom status when its version is
// newer than lastSeenVersion; nil when unchanged or the instance is unknown.
// One read, no script: nothing to keep atomic.
func (p *partition) GetCustomStatus(ctx context.Context, instance string, lastSeenVersion uint64) (*duroxide.CustomStatus, error) {
	const op = "get_custom_status"
	if instance == "" {
		return nil, invalid(op, "empty instance id")
	}
	// The fields read, in HMGET order: the status (absent when reset) and
	// its version (absent until the first update).
	const (
		fieldStatus = iota
		fieldVersion
	)
	v, err := p.rdb.HMGet(ctx, p.keys.Instance(instance), "cs", "csv").Result()
	if err != nil {
		return nil, fail(op, err)
	}
	ver, ok := v[fieldVersion].(string)
	if !ok {
		return nil, nil
	}
	n, err := strconv.ParseUint(ver, 10, 64)
	if err != nil {
		return nil, undecodable(op, "instance %s: corrupt custom status version %q", instance, ver)
	}
	if n <= lastSeenVersion {
		return nil, nil
	}
	cs := &duroxide.CustomStatus{Version: n}
	if s, ok := v[fieldStatus].(string); ok {
		cs.Status = &s
	}
	return cs, nil
}
