// Package funcsize measures the functions of Go source files: their length
// in lines and their cyclomatic complexity, as gocyclo counts it. Its test
// holds the repository to the house limits (Limits): no function over 80
// lines or cyclomatic complexity over 25, but the simulator's hot loops,
// each listed with the measurement that justifies it.
package funcsize

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Limits are the house limits: a function longer than MaxLines lines or
// with a cyclomatic complexity above MaxComplexity is an offender.
const (
	MaxLines      = 80
	MaxComplexity = 25
)

// Func is one function or method and its measures.
type Func struct {
	File       string // slash-separated, relative to the root measured
	Line       int    // of the func keyword
	Name       string // "Name" or "(Recv).Name", as gocyclo names it
	Lines      int    // from the func keyword to the closing brace, both included
	Complexity int    // cyclomatic, gocyclo's count
	Doc        string // its doc comment
}

// ID names the function in an allowlist: "path/file.go (Recv).Name".
func (f Func) ID() string { return f.File + " " + f.Name }

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s: %d lines, cyclomatic %d", f.File, f.Line, f.Name, f.Lines, f.Complexity)
}

// Over reports whether f is over either limit.
func (f Func) Over() bool { return f.Lines > MaxLines || f.Complexity > MaxComplexity }

// Measure measures every function declared in the Go files under root,
// tests excluded (a table-driven test's length is its table), skipping
// folders named testdata or starting with "." or "_", as the go command
// does, and those holding a go.mod of their own (another module, as the
// go command treats them). Functions come in file order, then line order.
func Measure(root string) ([]Func, error) {
	var out []Func
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir // another module (a copy of an older tree under out/, say): not this one's code
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fns, err := measureFile(path, filepath.ToSlash(rel))
		out = append(out, fns...)
		return err
	})
	return out, err
}

// measureFile measures the functions of one file, named rel.
func measureFile(path, rel string) ([]Func, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return MeasureSource(rel, src)
}

// MeasureSource measures the functions of one file's source, named rel.
func MeasureSource(rel string, src []byte) ([]Func, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Func
	add := func(name string, n ast.Node, doc *ast.CommentGroup) {
		from, to := fset.Position(n.Pos()), fset.Position(n.End())
		out = append(out, Func{File: rel, Line: from.Line, Name: name, Lines: to.Line - from.Line + 1,
			Complexity: Complexity(n), Doc: doc.Text()})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(funcName(d), d, d.Doc)
		case *ast.GenDecl: // var f = func(…) {…}, as gocyclo counts them
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for i, v := range vs.Values {
						if lit, ok := v.(*ast.FuncLit); ok && i < len(vs.Names) {
							add(vs.Names[i].Name, lit, d.Doc)
						}
					}
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Func) int { return a.Line - b.Line })
	return out, nil
}

// Complexity is n's cyclomatic complexity as gocyclo counts it
// (github.com/fzipp/gocyclo, complexity.go): 1 for the function, plus one
// for each if, for, range, case and select case but the defaults, && and
// ||. Function literals inside count toward the function around them.
func Complexity(n ast.Node) int {
	c := 0
	if _, ok := n.(*ast.FuncLit); ok {
		c = 1 // gocyclo counts a FuncDecl's 1 when it meets it, and a literal's not at all
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl, *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// funcName is "Name", or "(Recv).Name" / "(*Recv).Name" for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	return "(" + recvString(d.Recv.List[0].Type) + ")." + d.Name.Name
}

func recvString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + recvString(t.X)
	case *ast.IndexExpr: // a generic type's receiver, T[P]
		return recvString(t.X)
	case *ast.IndexListExpr:
		return recvString(t.X)
	}
	return "BADRECV"
}

// Size is a function's measures, as an allowlist holds them.
type Size struct{ Lines, Complexity int }

// HotLoopWord must be in a listed hot loop's doc comment, beside the
// measurement that justifies its size (what splitting it cost, measured
// with scripts/bench-cpu.sh).
const HotLoopWord = "measured"

// Check holds funcs to the limits and returns every violation, one per
// line: a function over a limit that neither list names; a listed
// offender grown past its listed size (offenders may only shrink); a
// listed offender no longer over the limits, or gone (its entry must go
// too, so that the list only shrinks); a hot loop whose doc comment does
// not carry its measurement. offenders maps Func.ID to the size listed;
// hotLoops maps the simulator's hot loops' IDs to why they stay whole.
func Check(funcs []Func, offenders map[string]Size, hotLoops map[string]string) []string {
	var bad []string
	seen := map[string]bool{}
	for _, f := range funcs {
		id := f.ID()
		seen[id] = true
		if _, hot := hotLoops[id]; hot {
			if !strings.HasPrefix(f.File, "sim/") {
				bad = append(bad, fmt.Sprintf("%s: listed as a hot loop, but only the simulator's (sim/) may be", f))
			} else if !strings.Contains(f.Doc, HotLoopWord) {
				bad = append(bad, fmt.Sprintf("%s: a hot loop whose doc comment does not say what splitting it %s", f, HotLoopWord))
			}
			continue
		}
		was, listed := offenders[id]
		switch {
		case listed && !f.Over():
			bad = append(bad, fmt.Sprintf("%s: within the limits now: remove %q from the offenders", f, id))
		case listed && (f.Lines > max(was.Lines, MaxLines) || f.Complexity > max(was.Complexity, MaxComplexity)):
			bad = append(bad, fmt.Sprintf("%s: grew past the %d lines, cyclomatic %d listed: a listed offender may only shrink (split it)", f, was.Lines, was.Complexity))
		case !listed && f.Over():
			bad = append(bad, fmt.Sprintf("%s: over the limits (%d lines, cyclomatic %d): split it", f, MaxLines, MaxComplexity))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(offenders)) {
		if !seen[id] {
			bad = append(bad, fmt.Sprintf("%s: listed as an offender, but no such function: remove it from the offenders", id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(hotLoops)) {
		if !seen[id] {
			bad = append(bad, fmt.Sprintf("%s: listed as a hot loop, but no such function: remove it from the hot loops", id))
		}
	}
	return bad
}
