// Package dxredis holds what the Redis provider and its tools share: the key
// schema of a namespace (Keys) and the Lua scripts, one per atomic operation,
// embedded from lua/. A script's file is named after the duroxide operation
// it implements (lua/ack_orchestration_item.lua); the libraries it draws on
// are lua/lib_*.lua, one Lua table each (see libraryTables).
//
// The provider itself is in package redisprovider; the contract it implements
// is package duroxide.
package dxredis
