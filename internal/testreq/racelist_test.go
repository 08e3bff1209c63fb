package testreq

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot is the repository's root, seen from this package.
const moduleRoot = "../.."

// TestRacePackagesListed: scripts/test-all runs the race detector over the
// packages in its race_packages list only, so the list must name every
// package whose own (non-test) code runs Go concurrently — a go
// statement, a channel, package sync or sync/atomic, a finalizer or
// cleanup (runtime.SetFinalizer, runtime.AddCleanup), time.AfterFunc,
// signal.Notify — and no other.
func TestRacePackagesListed(t *testing.T) {
	listed := racePackages(t)
	var want []string
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != moduleRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if why := concurrency(t, path); why != "" {
			rel, _ := filepath.Rel(moduleRoot, path)
			pkg := "./" + filepath.ToSlash(rel)
			if rel == "." {
				pkg = "."
			}
			want = append(want, pkg)
			if !slices.Contains(listed, pkg) {
				t.Errorf("%s runs Go concurrently (%s) but is not in scripts/test-all's race_packages", pkg, why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range listed {
		if !slices.Contains(want, pkg) {
			t.Errorf("scripts/test-all's race_packages names %s, whose code runs nothing concurrently: take it out", pkg)
		}
	}
}

// TestRootRaceTestsListed: of the root package, scripts/test-all runs only
// root_race_tests under the race detector; each must exist, and every
// root test whose body starts a goroutine or a garbage collection (which
// runs cleanups concurrently) must be listed.
func TestRootRaceTestsListed(t *testing.T) {
	listed := scriptList(t, "root_race_tests")
	files, err := filepath.Glob(filepath.Join(moduleRoot, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") || fd.Body == nil {
				continue
			}
			found[fd.Name.Name] = true
			why := ""
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					why = "starts a goroutine"
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "runtime" && n.Sel.Name == "GC" {
						why = "runs the garbage collector"
					}
				}
				return why == ""
			})
			if why != "" && !slices.Contains(listed, fd.Name.Name) {
				t.Errorf("%s (%s) %s but is not in scripts/test-all's root_race_tests", fd.Name.Name, filepath.Base(name), why)
			}
		}
	}
	for _, name := range listed {
		if !found[name] {
			t.Errorf("scripts/test-all's root_race_tests names %s, which is no root test", name)
		}
	}
}

// racePackages reads the race_packages list of scripts/test-all.
func racePackages(t *testing.T) []string { return scriptList(t, "race_packages") }

// scriptList reads the bash array name=( ... ) of scripts/test-all: one
// item a line, comments after #.
func scriptList(t *testing.T, name string) []string {
	f, err := os.Open(filepath.Join(moduleRoot, "scripts", "test-all"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pkgs []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == name+"=(":
			in = true
		case in && line == ")":
			return pkgs
		case in:
			line, _, _ = strings.Cut(line, "#")
			if line = strings.TrimSpace(line); line != "" {
				pkgs = append(pkgs, line)
			}
		}
	}
	t.Fatalf("scripts/test-all has no %s=( ... ) list", name)
	return nil
}

// concurrency says what in the non-test Go files of dir runs concurrently
// ("" for nothing).
func concurrency(t *testing.T, dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "sync" || p == "sync/atomic" {
				return filepath.Base(name) + " imports " + p
			}
		}
		why := ""
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				why = "a go statement"
			case *ast.ChanType, *ast.SendStmt:
				why = "a channel"
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					why = "a channel"
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					switch x.Name + "." + n.Sel.Name {
					case "runtime.SetFinalizer", "runtime.AddCleanup", "time.AfterFunc", "signal.Notify":
						why = x.Name + "." + n.Sel.Name
					}
				}
			}
			return why == ""
		})
		if why != "" {
			return filepath.Base(name) + ": " + why
		}
	}
	return ""
}
