package dxredis

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed lua/*.lua
var luaFS embed.FS

// prelude starts every script. The Dragonfly flag line is a comment for Redis
// and miniredis; the tables are declared before any library code so that every
// function can call every other one.
const prelude = `--!df flags=allow-undeclared-keys
local P = KEYS[1]
local U, K, O, W, S, I, V = {}, {}, {}, {}, {}, {}, {}
`

// libraries are the shared Lua files, in the order their code is emitted.
var libraries = []string{"util", "orch", "inst", "kv", "work", "sess"}

// Script returns the complete source of the script lua/<name>.lua: the
// prelude, then only the key functions and library definitions the script
// reaches (directly or through each other), then its body.
//
// Redis runs a script's whole chunk on every EVALSHA, so every function
// defined there is a closure created per call: a script carries nothing it
// does not use.
func Script(name string) (string, error) {
	body, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil || strings.HasPrefix(name, "lib_") {
		return "", fmt.Errorf("dxredis: no script %q", name)
	}
	defs, err := libraryDefinitions()
	if err != nil {
		return "", err
	}
	keep := reachable(defs, references(string(body)))
	var b strings.Builder
	b.WriteString(prelude)
	for _, d := range defs {
		if keep[d.name] {
			b.WriteString(d.text)
		}
	}
	b.Write(body)
	return b.String(), nil
}

// definition is one top-level definition of a library (a function, or a
// one-line constant or local) with the comment above it.
type definition struct {
	name string   // "O.take", "vparse", "K.inst", ...
	text string   // source, comment included, ending with a newline
	refs []string // names it references
}

var (
	// defLine matches the first line of a top-level definition and captures
	// the name it defines.
	defLine = regexp.MustCompile(`^(?:local\s+function\s+([A-Za-z_]\w*)|function\s+([A-Z]\.\w+)|local\s+([A-Za-z_]\w*)\s*=|([A-Z]\.\w+)\s*=)`)
	// tableRef matches a reference to a library table member.
	tableRef = regexp.MustCompile(`\b([UKOWSIV]\.[A-Za-z_]\w*)`)
	// word matches an identifier.
	word = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// libraryDefinitions parses the libraries once per process: every provider
// assembles its scripts at New.
var libraryDefinitions = sync.OnceValues(definitions)

// definitions splits the key functions and every library into definitions,
// in emission order.
func definitions() ([]definition, error) {
	var defs []definition
	for _, f := range families {
		defs = append(defs, definition{name: "K." + f.lua, text: luaKeyFunction(f)})
	}
	for _, lib := range libraries {
		src, err := luaFS.ReadFile("lua/lib_" + lib + ".lua")
		if err != nil {
			return nil, fmt.Errorf("dxredis: no library %q", lib)
		}
		d, err := splitDefinitions(lib, string(src))
		if err != nil {
			return nil, err
		}
		defs = append(defs, d...)
	}
	locals := map[string]bool{}
	seen := map[string]bool{}
	for _, d := range defs {
		if seen[d.name] {
			return nil, fmt.Errorf("dxredis: %s is defined twice in the Lua libraries", d.name)
		}
		seen[d.name] = true
		if !strings.Contains(d.name, ".") {
			locals[d.name] = true
		}
	}
	for i := range defs {
		defs[i].refs = referencesWith(defs[i].text, locals, defs[i].name)
	}
	return defs, nil
}

// splitDefinitions cuts one library into its top-level definitions. A
// function ends at the first line that is exactly "end" (bodies are
// indented); any other definition is one line. Comments and blank lines
// belong to the definition that follows them.
func splitDefinitions(lib, src string) ([]definition, error) {
	var defs []definition
	var pending strings.Builder
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := defLine.FindStringSubmatch(line)
		if m == nil {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
				return nil, fmt.Errorf("dxredis: lib_%s.lua:%d: top-level code that is not a definition", lib, i+1)
			}
			pending.WriteString(line + "\n")
			continue
		}
		name := m[1] + m[2] + m[3] + m[4]
		pending.WriteString(line + "\n")
		if m[1] != "" || m[2] != "" {
			for i++; i < len(lines) && lines[i] != "end"; i++ {
				pending.WriteString(lines[i] + "\n")
			}
			if i == len(lines) {
				return nil, fmt.Errorf("dxredis: lib_%s.lua: function %s has no closing 'end' line", lib, name)
			}
			pending.WriteString("end\n")
		}
		defs = append(defs, definition{name: name, text: pending.String()})
		pending.Reset()
	}
	return defs, nil
}

// references lists the library names a script body uses.
func references(src string) []string {
	return referencesWith(src, nil, "")
}

// referencesWith lists the table members, and the given locals, that src
// uses outside comments, except self.
func referencesWith(src string, locals map[string]bool, self string) []string {
	set := map[string]bool{}
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		for _, r := range tableRef.FindAllString(line, -1) {
			set[r] = true
		}
		for _, w := range word.FindAllString(line, -1) {
			if locals[w] {
				set[w] = true
			}
		}
	}
	delete(set, self)
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// reachable returns the definitions reached from roots through references.
// A body may also reference locals it defines itself: those match nothing.
func reachable(defs []definition, roots []string) map[string]bool {
	byName := make(map[string]definition, len(defs))
	locals := map[string]bool{}
	for _, d := range defs {
		byName[d.name] = d
		if !strings.Contains(d.name, ".") {
			locals[d.name] = true
		}
	}
	keep := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		d, ok := byName[n]
		if !ok || keep[n] {
			return
		}
		keep[n] = true
		for _, r := range d.refs {
			visit(r)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return keep
}

// ScriptNames lists the atomic operations, one per lua/<name>.lua file that is
// not a library.
func ScriptNames() []string {
	entries, _ := luaFS.ReadDir("lua")
	var names []string
	for _, e := range entries {
		n := strings.TrimSuffix(e.Name(), ".lua")
		if !strings.HasPrefix(n, "lib_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
