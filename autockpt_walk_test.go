package op2_test

import (
	"go/ast"
	"path/filepath"
	"testing"
)

// TestHostAccessIsSeenByCheckpoints parses the package: every function
// that brings the values of Dats or matrices to the host (HostAccess,
// ReadRange, CopyFrom) tells the automatic checkpoints first (the
// engine's HostRead, HostWrote, HostProduct, HostReadAll, or observe),
// so that a restart runs the loops whose results the host saw again, or
// is one of the functions below, each with its reason. The checkpoints'
// own host access is the engine's and internal/checkpoint's.
func TestHostAccessIsSeenByCheckpoints(t *testing.T) {
	exempt := map[string]string{
		"nativeAPI":     "its InverseDiagonal runs inside Solve, which observes A, x and b before and after",
		"globalNumbers": "reads global numbers in a Dat it made, which no loop writes",
	}
	fset, files := parsePackage(t)
	for _, f := range files {
		file := fset.Position(f.Pos()).Filename
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			var access, seen bool
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fun := c.Fun.(type) {
				case *ast.SelectorExpr:
					switch fun.Sel.Name {
					case "HostAccess", "ReadRange", "CopyFrom":
						access = true
					case "HostRead", "HostWrote", "HostProduct", "HostReadAll":
						seen = true
					}
				case *ast.Ident:
					seen = seen || fun.Name == "observe"
				}
				return true
			})
			if !access || seen {
				continue
			}
			name := fd.Name.Name
			if _, ok := exempt[name]; ok || filepath.Base(file) == "global.go" { // Globals: the log of reductions holds their values
				continue
			}
			t.Errorf("%s: %s reads or writes data on the host without telling the automatic checkpoints (HostRead, HostWrote, HostProduct, observe)", fset.Position(fd.Pos()), name)
		}
	}
}
