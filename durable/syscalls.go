package durable

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
)

// activityFunc finds a user activity or one of duroxide's system activities.
func (r *Runtime) activityFunc(name string) (ActivityFunc, bool) {
	switch name {
	case sysActivityNewGUID:
		return func(*ActivityContext, string) (string, error) { return newGUID(), nil }, true
	case sysActivityUtcNowMs:
		return func(*ActivityContext, string) (string, error) {
			return strconv.FormatInt(r.opts.Clock().UnixMilli(), 10), nil
		}, true
	case sysActivityGetKVValue:
		return r.getKVValueActivity, true
	}
	return r.reg.activity(name)
}

func (r *Runtime) getKVValueActivity(ctx *ActivityContext, input string) (string, error) {
	in, err := decodeJSON[struct {
		InstanceID *string `json:"instance_id"`
		Key        *string `json:"key"`
	}](input)
	if err != nil {
		return "", fmt.Errorf("get_kv_value: invalid input: %v", err)
	}
	if in.InstanceID == nil || in.Key == nil {
		return "", errors.New("get_kv_value: missing instance_id or key")
	}
	v, found, err := r.p.GetKVValue(ctx, *in.InstanceID, *in.Key)
	if err != nil {
		return "", fmt.Errorf("get_kv_value client error: %v", err)
	}
	if !found {
		return "null", nil
	}
	return encodeJSON(v)
}

// newGUID is a random RFC 4122 version 4 id (duroxide's new_guid returns a
// UUID-shaped string; any unique id serves, as replay reads it from history).
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
