package dataset

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No reader is registered process-wide: no package of the module keeps a
// Format in a package-level variable or has a function that sets one. A
// program passes its Format in with each folder (Folder). The test names
// the file and line of one that comes back.
func TestNoProcessWideFormat(t *testing.T) {
	isFormat := func(e ast.Expr, pkg string) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return pkg == "dataset" && e.Name == "Format"
		case *ast.SelectorExpr:
			x, ok := e.X.(*ast.Ident)
			return ok && x.Name == "dataset" && e.Sel.Name == "Format"
		}
		return false
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != ".." {
			if _, serr := os.Stat(filepath.Join(p, "go.mod")); serr == nil {
				return filepath.SkipDir // another module (a copy of an older tree under out/)
			}
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				if decl.Tok != token.VAR {
					continue
				}
				for _, spec := range decl.Specs {
					// var _ Format = … only asserts that a type is one
					if vs := spec.(*ast.ValueSpec); vs.Type != nil && isFormat(vs.Type, f.Name.Name) && vs.Names[0].Name != "_" {
						t.Errorf("%s: a package-level %s holds a Format: pass it in with the folder (dataset.Folder)", fset.Position(vs.Pos()), vs.Names[0].Name)
					}
				}
			case *ast.FuncDecl:
				if decl.Recv == nil && decl.Name.Name == "SetFormat" {
					t.Errorf("%s: SetFormat registers a Format process-wide: pass it in with the folder (dataset.Folder)", fset.Position(decl.Pos()))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
