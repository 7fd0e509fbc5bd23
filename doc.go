// Package dxredis holds what the Redis provider and its tools share: the key
// schema of a namespace (Keys) and the Lua scripts, one per atomic operation,
// embedded from lua/.
//
// The provider itself is in package redisprovider; the contract it implements
// is package duroxide.
package dxredis
