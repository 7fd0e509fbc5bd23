package dxotel

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/duroxide-go/duroxide-redis/duroxide"
)

// notPassedThrough are duroxide's interfaces with context-taking methods that
// are not optional extensions found by type assertion on a provider.
var notPassedThrough = map[string]string{
	"Provider":      "the interface the wrapper instruments",
	"ProviderAdmin": "reached through Provider.Admin, which the wrapper instruments in admin.go",
}

// adminOptional are duroxide's optional extensions of ProviderAdmin, not of
// Provider: the instrumented admin forwards them (admin.go), which
// TestAbsentPassThroughsHaveNoMethodOfDuroxide: over a provider with no
// optional interface, no method of the wrapper has the signature of a method
// of an optional interface, so not even a caller's one-method interface (say
// interface{ EnqueueForWorkerBatch(...) error }) finds a pass-through whose
// inner call is missing. A pass-through method that does not take ctx C
// first would fail here.
func TestAbsentPassThroughsHaveNoMethodOfDuroxide(t *testing.T) {
	outer, err := WrapProvider(withCapabilities(&provider{inner: struct{ duroxide.Provider }{}}, 0), Options{DisableGauges: true})
	if err != nil {
		t.Fatal(err)
	}
	wt := reflect.TypeOf(outer)
	for _, o := range optional {
		for m := range o.Methods() {
			got, ok := wt.MethodByName(m.Name)
			if !ok {
				t.Errorf("the wrapper has no %s at all: the pass-through of %s is not embedded", m.Name, o.Name())
				continue
			}
			// got.Type has the receiver first; m.Type does not.
			in := make([]reflect.Type, 0, m.Type.NumIn())
			for i := 1; i < got.Type.NumIn(); i++ {
				in = append(in, got.Type.In(i))
			}
			out := make([]reflect.Type, 0, got.Type.NumOut())
			for i := range got.Type.NumOut() {
				out = append(out, got.Type.Out(i))
			}
			if reflect.FuncOf(in, out, got.Type.IsVariadic()) == m.Type {
				t.Errorf("the wrapper of a provider without %s has its method %s", o.Name(), m.Name)
			}
		}
	}
}

// TestAdminKeepsTheInstanceLister checks.
var adminOptional = map[string]reflect.Type{
	"InstanceLister": reflect.TypeFor[duroxide.InstanceLister](),
}

// TestEveryOptionalInterfaceOfDuroxideIsPassedThrough reads duroxide's source
// for its interfaces rather than trusting a list kept by hand, so a new
// optional provider interface fails this test until the wrapper passes it
// through (optional.go). An optional provider interface is told apart
// from duroxide's other interfaces (the sealed sums EventKind and WorkItem)
// by taking a context.Context: every provider call does.
func TestEveryOptionalInterfaceOfDuroxideIsPassedThrough(t *testing.T) {
	found := providerInterfaces(t)
	for name := range adminOptional {
		if !slices.Contains(found, name) {
			t.Fatalf("the scan of duroxide did not find %s (found %v)", name, found)
		}
	}
	for name := range notPassedThrough {
		if !slices.Contains(found, name) {
			t.Fatalf("the scan of duroxide did not find %s: it no longer finds provider interfaces (found %v)", name, found)
		}
	}
	var passed []string
	for _, o := range optional {
		passed = append(passed, o.Name())
	}
	for _, name := range found {
		_, admin := adminOptional[name]
		if _, ok := notPassedThrough[name]; !ok && !admin && !slices.Contains(passed, name) {
			t.Errorf("duroxide.%s is an optional provider interface the wrapper does not pass through: "+
				"write its pass-through and add it to optional and wrapped (optional.go)", name)
		}
	}
	for _, name := range passed {
		if !slices.Contains(found, name) {
			t.Errorf("the wrapper passes duroxide.%s through, which the scan did not find in duroxide", name)
		}
	}
}

// providerInterfaces returns the exported interface types of duroxide (as
// this module builds it) that have a method taking a context.Context.
func providerInterfaces(t *testing.T) []string {
	t.Helper()
	// build.Import resolves the package as the go command does, replace
	// directives included, so this is the duroxide the wrapper compiles with.
	pkg, err := build.Import(reflect.TypeFor[duroxide.Provider]().PkgPath(), ".", 0)
	if err != nil {
		t.Fatalf("locate duroxide: %v", err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				if it, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() && takesContext(it) {
					found = append(found, ts.Name.Name)
				}
			}
		}
	}
	return found
}

// takesContext reports whether a method of it has a context.Context
// parameter.
func takesContext(it *ast.InterfaceType) bool {
	for _, m := range it.Methods.List {
		fn, ok := m.Type.(*ast.FuncType)
		if !ok {
			continue // an embedded interface
		}
		for _, p := range fn.Params.List {
			sel, ok := p.Type.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Context" {
				continue
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "context" {
				return true
			}
		}
	}
	return false
}

// TestWrapperHasExactlyTheOptionalInterfacesOfTheInnerProvider wraps an
// inner provider of every subset of the optional interfaces (the wrapper's
// own types make such providers) and checks that the wrapper has exactly the
// interfaces of the inner one: none lost, which would silently turn a fast
// path off, and none added, which would claim a capability the storage lacks.
// It also proves the order of optional and of wrapped's type parameters
// agree: a pass-through in the wrong place gives some mask the wrong
// interface.
func TestWrapperHasExactlyTheOptionalInterfacesOfTheInnerProvider(t *testing.T) {
	for mask := range uint(1) << len(optional) {
		inner := withCapabilities(&provider{inner: struct{ duroxide.Provider }{}}, mask)
		outer, err := WrapProvider(inner, Options{DisableGauges: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range optional {
			want := mask&(1<<i) != 0
			if got := reflect.TypeOf(inner).Implements(o); got != want {
				t.Errorf("mask %04b: the inner provider implements %s: %v, want %v", mask, o.Name(), got, want)
			}
			if got := reflect.TypeOf(outer).Implements(o); got != want {
				t.Errorf("mask %04b: the wrapper implements %s: %v, want %v", mask, o.Name(), got, want)
			}
		}
	}
}

// TestAdminKeepsTheInstanceLister: the instrumented admin lists instances
// page by page exactly when the inner admin does.
func TestAdminKeepsTheInstanceLister(t *testing.T) {
	plain := struct{ duroxide.ProviderAdmin }{}
	lister := struct {
		duroxide.ProviderAdmin
		duroxide.InstanceLister
	}{}
	if _, ok := instrumentAdmin(&provider{}, plain).(duroxide.InstanceLister); ok {
		t.Error("the admin of an inner admin without duroxide.InstanceLister claims it")
	}
	if _, ok := instrumentAdmin(&provider{}, lister).(duroxide.InstanceLister); !ok {
		t.Error("the admin hides the inner admin's duroxide.InstanceLister")
	}
}
