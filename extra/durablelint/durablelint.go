// Package durablelint is a go/analysis analyzer that reports code which makes
// a durable orchestration non-deterministic on replay.
//
// An orchestration is replayed from its history every time it resumes, so it
// must take the same path each time: wall-clock time, randomness, goroutines,
// channels, map iteration order and I/O all differ between the first run and
// a replay. The analyzer finds the orchestrations of a package — functions
// passed to (*durable.Registry).AddOrchestration, AddOrchestrationVersion,
// MustAddOrchestration or MustAddOrchestrationVersion, directly or wrapped in
// durable.Orchestration, and functions whose doc comment carries the
// directive
//
//	//durable:orchestration
//
// — and reports, in their bodies and in the same-package functions they call
// (transitively), each use of such a source together with the deterministic
// replacement the durable package offers. A comment
//
//	//durablelint:ignore why
//
// on the reported line or the line above silences a report.
package durablelint

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// DurablePath is the import path of the package whose Registry the analyzer
// recognises.
const DurablePath = "github.com/duroxide-go/duroxide-redis/durable"

// Directive marks a function as an orchestration when it is registered in a
// way the analyzer cannot see (another package, a table, a variable).
const Directive = "//durable:orchestration"

// IgnoreDirective, in a comment on the reported line or the line above it,
// silences the report there: for code that breaks determinism on purpose
// (a test provoking a nondeterminism error) or provably harmlessly (a sum
// over a map).
const IgnoreDirective = "//durablelint:ignore"

// Analyzer reports non-deterministic code in durable orchestrations.
var Analyzer = &analysis.Analyzer{
	Name:     "durablelint",
	Doc:      "report non-deterministic code (time, randomness, goroutines, channels, map ranges, I/O) in durable orchestrations\n\nOrchestrations are functions registered with (*durable.Registry).AddOrchestration and its variants, or marked with a //durable:orchestration directive; the same-package functions they call are checked too.",
	URL:      "https://github.com/duroxide-go/duroxide-redis/tree/main/extra/durablelint",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// registrations maps each Registry method that registers an orchestration to
// the index of its function argument.
var registrations = map[string]int{
	"AddOrchestration":            1,
	"MustAddOrchestration":        1,
	"AddOrchestrationVersion":     2,
	"MustAddOrchestrationVersion": 2,
}

// timeAdvice says, for each banned function of package time, what to use.
var timeAdvice = map[string]string{
	"Now":       "use ctx.UTCNow(), which records the time in history",
	"Since":     "use ctx.UTCNow() and subtract, so replay sees the recorded time",
	"Until":     "use ctx.UTCNow() and subtract, so replay sees the recorded time",
	"Sleep":     "use a durable timer: ctx.Timer(d).Get()",
	"After":     "use a durable timer: ctx.Timer(d), raced with ctx.Select",
	"AfterFunc": "use a durable timer: ctx.Timer(d), raced with ctx.Select",
	"Tick":      "use durable timers: ctx.Timer(d) in a loop (with ContinueAsNew for long loops)",
	"NewTimer":  "use a durable timer: ctx.Timer(d)",
	"NewTicker": "use durable timers: ctx.Timer(d) in a loop (with ContinueAsNew for long loops)",
}

const randAdvice = "use ctx.NewGUID() for unique values, or draw random numbers in an activity"

// ioPackages are packages whose every function and method does I/O or reads
// process state that differs between runs. Packages under net/ count too.
var ioPackages = map[string]bool{
	"os":           true,
	"os/exec":      true,
	"os/signal":    true,
	"os/user":      true,
	"net":          true,
	"io/ioutil":    true,
	"database/sql": true,
	"syscall":      true,
}

const ioAdvice = "do I/O in an activity (ctx.ScheduleActivity) so its result is recorded in history"

func isIOPackage(path string) bool {
	return ioPackages[path] || strings.HasPrefix(path, "net/")
}

// orchestration is one function body to check.
type orchestration struct {
	node ast.Node // *ast.FuncDecl or *ast.FuncLit
	name string   // the registered name, or the function's name
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)

	decls := map[*types.Func]*ast.FuncDecl{}
	var roots []orchestration
	insp.Preorder([]ast.Node{(*ast.FuncDecl)(nil)}, func(n ast.Node) {
		fd := n.(*ast.FuncDecl)
		if fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok && fd.Body != nil {
			decls[fn] = fd
		}
		if hasDirective(fd.Doc) && fd.Body != nil {
			roots = append(roots, orchestration{node: fd, name: fd.Name.Name})
		}
	})
	insp.Preorder([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node) {
		call := n.(*ast.CallExpr)
		idx, ok := registrationArg(pass.TypesInfo, call)
		if !ok || idx >= len(call.Args) {
			return
		}
		name := "?"
		if tv, ok := pass.TypesInfo.Types[call.Args[0]]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
			name = constant.StringVal(tv.Value)
		}
		if body := resolveFunc(pass.TypesInfo, decls, call.Args[idx]); body != nil {
			roots = append(roots, orchestration{node: body, name: name})
		}
	})

	c := &checker{pass: pass, decls: decls, visited: map[ast.Node]bool{}, reported: map[token.Pos]bool{}, ignored: ignoredLines(pass)}
	for _, r := range roots {
		c.check(r.node, r.name, "")
	}
	return nil, nil
}

func hasDirective(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.TrimSpace(c.Text) == Directive {
			return true
		}
	}
	return false
}

// registrationArg reports whether call registers an orchestration on a
// *durable.Registry and, if so, which argument holds the function.
func registrationArg(info *types.Info, call *ast.CallExpr) (int, bool) {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok {
		return 0, false
	}
	idx, ok := registrations[fn.Name()]
	if !ok {
		return 0, false
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return 0, false
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Name() != "Registry" || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != DurablePath {
		return 0, false
	}
	return idx, true
}

// resolveFunc finds the body of the function expression e: a literal, a
// same-package function or method value, or either wrapped in
// durable.Orchestration. It returns nil for anything else (a variable, a
// function from another package).
func resolveFunc(info *types.Info, decls map[*types.Func]*ast.FuncDecl, e ast.Expr) ast.Node {
	e = ast.Unparen(e)
	switch e := e.(type) {
	case *ast.FuncLit:
		return e
	case *ast.CallExpr:
		if fn, ok := typeutil.Callee(info, e).(*types.Func); ok && len(e.Args) == 1 &&
			fn.Name() == "Orchestration" && fn.Pkg() != nil && fn.Pkg().Path() == DurablePath {
			return resolveFunc(info, decls, e.Args[0])
		}
	case *ast.Ident, *ast.SelectorExpr, *ast.IndexExpr, *ast.IndexListExpr:
		if fn := funcObject(info, e); fn != nil {
			if d := decls[fn.Origin()]; d != nil {
				return d
			}
		}
	}
	return nil
}

// funcObject returns the function or method that the expression e names.
func funcObject(info *types.Info, e ast.Expr) *types.Func {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		fn, _ := info.Uses[e].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[e]; ok {
			fn, _ := sel.Obj().(*types.Func)
			return fn
		}
		fn, _ := info.Uses[e.Sel].(*types.Func)
		return fn
	case *ast.IndexExpr:
		return funcObject(info, e.X)
	case *ast.IndexListExpr:
		return funcObject(info, e.X)
	}
	return nil
}

type checker struct {
	pass     *analysis.Pass
	decls    map[*types.Func]*ast.FuncDecl
	visited  map[ast.Node]bool
	reported map[token.Pos]bool
	ignored  map[lineKey]bool
}

type lineKey struct {
	file string
	line int
}

// ignoredLines returns the lines IgnoreDirective silences: its own and the
// next.
func ignoredLines(pass *analysis.Pass) map[lineKey]bool {
	out := map[lineKey]bool{}
	for _, f := range pass.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, IgnoreDirective) {
					p := pass.Fset.Position(c.Slash)
					out[lineKey{p.Filename, p.Line}] = true
					out[lineKey{p.Filename, p.Line + 1}] = true
				}
			}
		}
	}
	return out
}

// check reports the non-deterministic code in fn, the body of orchestration
// name, and follows its calls to same-package functions. via names the
// helper fn is when it is not the orchestration itself.
func (c *checker) check(fn ast.Node, name, via string) {
	if c.visited[fn] {
		return
	}
	c.visited[fn] = true
	var body *ast.BlockStmt
	switch fn := fn.(type) {
	case *ast.FuncDecl:
		body = fn.Body
	case *ast.FuncLit:
		body = fn.Body
	}
	where := fmt.Sprintf("orchestration %q", name)
	if via != "" {
		where = fmt.Sprintf("%s (called from orchestration %q)", via, name)
	}
	r := func(pos token.Pos, what, advice string) {
		if c.reported[pos] {
			return
		}
		c.reported[pos] = true
		if p := c.pass.Fset.Position(pos); c.ignored[lineKey{p.Filename, p.Line}] {
			return
		}
		c.pass.Reportf(pos, "%s in %s is not deterministic on replay: %s", what, where, advice)
	}
	info := c.pass.TypesInfo
	inSelect := map[ast.Node]bool{}
	var helpers []*ast.FuncDecl
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			r(n.Go, "go statement", "use ctx.Go(func(ctx *durable.OrchestrationContext) (string, error) { ... }) (or durable.Go[T]) and wait on its future")
		case *ast.SelectStmt:
			r(n.Select, "select statement", "use ctx.Select(futures...) over durable futures (timers, activities, events)")
			// The select's own sends and receives are reported with it.
			for _, cc := range n.Body.List {
				switch comm := cc.(*ast.CommClause).Comm.(type) {
				case *ast.SendStmt:
					inSelect[comm] = true
				case *ast.ExprStmt:
					inSelect[ast.Unparen(comm.X)] = true
				case *ast.AssignStmt:
					inSelect[ast.Unparen(comm.Rhs[0])] = true
				}
			}
		case *ast.SendStmt:
			if !inSelect[n] {
				r(n.Arrow, "channel send", "pass values between ctx.Go blocks through their futures, or use ctx.Dequeue / WaitForEvent for external input")
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && !inSelect[n] {
				r(n.OpPos, "channel receive", "wait on durable futures (Get, ctx.Select, ctx.Join), or use ctx.Dequeue / WaitForEvent for external input")
			}
		case *ast.RangeStmt:
			c.checkRange(n, r)
		case *ast.Ident:
			c.checkUse(n, r)
		case *ast.CallExpr:
			if fn, ok := typeutil.Callee(info, n).(*types.Func); ok {
				if d := c.decls[fn.Origin()]; d != nil {
					helpers = append(helpers, d)
				}
			}
		}
		return true
	})
	for _, h := range helpers {
		c.check(h, name, funcName(h))
	}
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv != nil && len(d.Recv.List) == 1 {
		t := d.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		switch t := t.(type) {
		case *ast.IndexExpr:
			t2 := t.X
			if id, ok := t2.(*ast.Ident); ok {
				return id.Name + "." + d.Name.Name
			}
		case *ast.IndexListExpr:
			if id, ok := t.X.(*ast.Ident); ok {
				return id.Name + "." + d.Name.Name
			}
		case *ast.Ident:
			return t.Name + "." + d.Name.Name
		}
	}
	return d.Name.Name
}

// checkRange reports ranges over maps, over the random-order iterators of
// package maps, and over channels.
func (c *checker) checkRange(n *ast.RangeStmt, r func(token.Pos, string, string)) {
	info := c.pass.TypesInfo
	t := info.TypeOf(n.X)
	if t == nil {
		return
	}
	switch t.Underlying().(type) {
	case *types.Map:
		r(n.For, "ranging over a map", "map iteration order is random; range over sorted keys (slices.Sorted(maps.Keys(m)))")
		return
	case *types.Chan:
		r(n.For, "ranging over a channel", "wait on durable futures (Get, ctx.Select, ctx.Join), or use ctx.Dequeue / WaitForEvent for external input")
		return
	}
	if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok {
		if fn, ok := typeutil.Callee(info, call).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "maps" {
			switch fn.Name() {
			case "Keys", "Values", "All":
				r(n.For, "ranging over maps."+fn.Name(), "map iteration order is random; range over sorted keys (slices.Sorted(maps.Keys(m)))")
			}
		}
	}
}

// checkUse reports a use (call or function value) of a banned function or
// method: wall-clock time, randomness and I/O.
func (c *checker) checkUse(id *ast.Ident, r func(token.Pos, string, string)) {
	fn, ok := c.pass.TypesInfo.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return
	}
	path := fn.Pkg().Path()
	what := path + "." + fn.Name()
	if recv := fn.Signature().Recv(); recv != nil {
		what = types.TypeString(recv.Type(), nil) + "." + fn.Name()
	}
	switch {
	case path == "time":
		if advice, ok := timeAdvice[fn.Name()]; ok && fn.Signature().Recv() == nil {
			r(id.Pos(), what, advice)
		}
	case path == "math/rand" || path == "math/rand/v2" || path == "crypto/rand":
		r(id.Pos(), what, randAdvice)
	case isIOPackage(path):
		r(id.Pos(), what, ioAdvice)
	}
}
