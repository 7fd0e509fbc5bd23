package dxredis

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// A function library (Redis 7.0+: FUNCTION LOAD, FCALL) holds every script as
// one registered function. Redis compiles and runs the library's chunk once,
// at load, so the shared Lua is defined once per server instead of once per
// call as in an EVALSHA script's prelude.
//
// The scripts are written against EVAL's globals: KEYS[1] (the namespace
// prefix) and ARGV. In the library those are locals of the chunk that every
// function sets from its own keys and args before running its body; the
// server runs one call at a time, so no two calls see each other's values.

// Library is the function library of every script, named after its content
// so that providers of different versions on one server never replace each
// other's functions.
type Library struct {
	// Name is the library's name (the "#!lua name=" header).
	Name string
	// Source is what FUNCTION LOAD takes.
	Source    string
	functions map[string]string
}

// Function returns the registered name of script lua/<name>.lua, or "" when
// there is no such script.
func (l *Library) Function(name string) string { return l.functions[name] }

// LibraryPrefix starts the name of every version's library; the rest is a
// hash of its code.
const LibraryPrefix = "dxredis_"

// FunctionLibrary returns the library of every script, built once per
// process.
var FunctionLibrary = sync.OnceValues(buildLibrary)

func buildLibrary() (*Library, error) {
	defs, err := libraryDefinitions()
	if err != nil {
		return nil, err
	}
	var body strings.Builder
	body.WriteString(libraryPrelude())
	for _, d := range defs {
		body.WriteString(d.text)
	}
	body.WriteString("local function begin(keys, args)\n  P, ARGV = keys[1], args\n  U.reset()\nend\n")
	names := ScriptNames()
	scripts := make([]string, len(names))
	for i, name := range names {
		src, err := luaFS.ReadFile("lua/" + name + ".lua")
		if err != nil {
			return nil, fmt.Errorf("dxredis: no script %q", name)
		}
		// assemble checks that every library member the body uses exists
		if _, err := assemble(name, string(src)); err != nil {
			return nil, err
		}
		scripts[i] = string(src)
	}
	sum := sha1.Sum([]byte(body.String() + strings.Join(scripts, "\x00")))
	tag := hex.EncodeToString(sum[:6])
	l := &Library{Name: LibraryPrefix + tag, functions: make(map[string]string, len(names))}
	for i, name := range names {
		fn := name + "_" + tag
		l.functions[name] = fn
		flags := ""
		if readOnly(scripts[i]) {
			// FCALL_RO and read-only replicas take only functions so flagged
			flags = ", flags={'no-writes'}"
		}
		fmt.Fprintf(&body, "redis.register_function{function_name='%s', callback=function(keys, args)\nbegin(keys, args)\n%s\nend%s}\n", fn, scripts[i], flags)
	}
	l.Source = "#!lua name=" + l.Name + "\n" + body.String()
	return l, nil
}

// libraryPrelude declares what the EVAL prelude takes from globals as
// chunk locals, then the library tables.
func libraryPrelude() string {
	return "local P, ARGV\n" + tableDeclaration()
}

// readOnlyMarker is the header line of a script that never writes.
const readOnlyMarker = "\n-- Flags    no-writes"

func readOnly(src string) bool { return strings.Contains(src, readOnlyMarker) }

// ReadOnlyScript reports whether script lua/<name>.lua declares in its
// header that it never writes (registered with the no-writes flag, called
// with FCALL_RO), so that a read-only replica runs it.
func ReadOnlyScript(name string) bool {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	return err == nil && readOnly(string(src))
}
