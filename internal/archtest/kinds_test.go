package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	module   = "github.com/goop2/op2"
	corePath = module + "/internal/core"
)

// kindPackages may ask an argument's kind: the data model that derives
// the facts (core.ArgFacts), the engine that binds arguments, and the two
// code generators, whose output is shaped by it.
var kindPackages = map[string]bool{
	corePath:                            true,
	module + "/internal/engine":         true,
	module + "/internal/codegen/hostc":  true,
	module + "/internal/codegen/device": true,
}

// exemptFiles still ask the kind while they move to a package that may,
// each as "package path/file name" with a comment saying where it goes.
// It is empty: the root's autockpt.go, the last entry, is now in
// internal/engine (issue 51). An entry with no site left fails the test,
// so that none outlives its move.
var exemptFiles = []string{}

// listedPackage is what TestArgKindSites reads of `go list -json`.
type listedPackage struct {
	ImportPath      string
	Dir             string
	Export          string
	CompiledGoFiles []string
	Module          *struct{ Path string }
	Error           *struct{ Err string }
}

// TestArgKindSites type-checks every non-test package of the module and
// fails, naming file and line, on each use of an argument's kind outside
// kindPackages and exemptFiles: a read of the Kind field of core.Arg or
// core.ArgSig, or a core.ArgKind constant compared, switched on or
// passed. Making an argument is not asking its kind: a constant as the
// Kind of a composite literal, or assigned to a Kind field, is allowed.
// Code elsewhere reads core.ArgFacts (core.Arg.Facts, ArgSig.Facts).
func TestArgKindSites(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command lists the module's packages: %v", err)
	}
	// -export gives the dependencies' export data; -compiled the Go
	// files cgo produces, with line directives to the source.
	cmd := exec.Command(goCmd, "list", "-e", "-json", "-deps", "-export", "-compiled", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	var pkgs []*listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == module && len(p.CompiledGoFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(f)
	})
	root := ""
	for _, p := range pkgs {
		if p.ImportPath == module {
			root = p.Dir
		}
	}
	var sites []string
	exempted := map[string]int{}
	for _, p := range pkgs {
		if kindPackages[p.ImportPath] {
			continue
		}
		n := 0
		for _, s := range kindSites(t, fset, imp, p) {
			if key := p.ImportPath + "/" + filepath.Base(s.Filename); slices.Contains(exemptFiles, key) {
				exempted[key]++
				continue
			}
			name := s.Filename
			if rel, err := filepath.Rel(root, name); err == nil && root != "" {
				name = rel
			}
			if site := fmt.Sprintf("%s:%d", name, s.Line); !slices.Contains(sites, site) {
				sites = append(sites, site)
				n++
			}
		}
		if n > 0 {
			t.Logf("%s: %d lines ask an argument's kind", p.ImportPath, n)
		}
	}
	for _, s := range sites {
		t.Errorf("%s: asks an argument's kind; read its facts (core.Arg.Facts, core.ArgSig.Facts) instead, or move the code to a package that may (kindPackages)", s)
	}
	for _, f := range exemptFiles {
		if exempted[f] == 0 {
			t.Errorf("exempted file %s asks no argument's kind (or is gone): take it off exemptFiles", f)
		}
	}
}

// kindSites type-checks package p and returns the positions where it
// asks an argument's kind.
func kindSites(t *testing.T, fset *token.FileSet, imp types.Importer, p *listedPackage) []token.Position {
	t.Helper()
	var files []*ast.File
	for _, name := range p.CompiledGoFiles {
		if !filepath.IsAbs(name) {
			name = filepath.Join(p.Dir, name)
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", p.ImportPath, err)
	}
	var sites []token.Position
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			var parent ast.Node
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if sel := info.Selections[n]; sel != nil && sel.Kind() == types.FieldVal && isKindField(sel.Obj()) && !assigned(parent, n) {
					sites = append(sites, fset.Position(n.Sel.Pos()))
				}
			case *ast.Ident:
				if c, ok := info.Uses[n].(*types.Const); ok && isArgKind(c.Type()) && !constructs(info, stack) {
					sites = append(sites, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	return sites
}

// isArgKind reports whether t is core.ArgKind.
func isArgKind(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == corePath && n.Obj().Name() == "ArgKind"
}

// isKindField reports whether obj is the Kind field of an argument
// (core.Arg, core.ArgSig): a field of core named Kind, of type ArgKind.
func isKindField(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	return ok && v.IsField() && v.Pkg() != nil && v.Pkg().Path() == corePath && v.Name() == "Kind" && isArgKind(v.Type())
}

// assigned reports whether selector x is assigned to, one of the left
// sides of the assignment parent.
func assigned(parent ast.Node, x ast.Expr) bool {
	as, ok := parent.(*ast.AssignStmt)
	return ok && as.Tok == token.ASSIGN && slices.Contains(as.Lhs, x)
}

// constructs reports whether the constant at the top of stack (an
// identifier, possibly qualified: core.ArgDirect) makes an argument: the
// value of a composite literal's Kind, or assigned to a Kind field in the
// same position of an assignment.
func constructs(info *types.Info, stack []ast.Node) bool {
	i := len(stack) - 1
	var x ast.Expr = stack[i].(*ast.Ident)
	if i > 0 {
		if se, ok := stack[i-1].(*ast.SelectorExpr); ok && se.Sel == x {
			x, i = se, i-1
		}
	}
	if i == 0 {
		return false
	}
	switch p := stack[i-1].(type) {
	case *ast.KeyValueExpr:
		key, ok := p.Key.(*ast.Ident)
		_, lit := stack[max(i-2, 0)].(*ast.CompositeLit)
		return ok && lit && p.Value == x && isKindField(info.Uses[key])
	case *ast.AssignStmt:
		k := slices.Index(p.Rhs, x)
		if p.Tok != token.ASSIGN || k < 0 || len(p.Lhs) != len(p.Rhs) {
			return false
		}
		se, ok := p.Lhs[k].(*ast.SelectorExpr)
		return ok && strings.HasSuffix(se.Sel.Name, "Kind") && isKindField(info.Uses[se.Sel])
	}
	return false
}
