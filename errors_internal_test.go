package op2

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/jit"
)

// TestAPIError: apiError prefixes internal errors once, turns the typed
// internal errors into the exported types with their fields, and keeps
// sentinels and the original chain reachable.
func TestAPIError(t *testing.T) {
	ce := &jit.CompileError{Compiler: "cc -O3", SourcePath: "/c/k.c", Output: "k.c:1: error: oops"}
	le := &jit.LoadError{Path: "/c/k.so", SourcePath: "/c/k.c", Compiler: "cc", Reason: "undefined symbol: f", Warnings: "w"}
	de := &core.DeviceBuildError{API: "OpenCL", Device: "dev", SourcePath: "/c/k.cl", Log: "k.cl:1: error", Err: errors.New("driver")}
	inner := errors.New("inner")
	cases := []struct {
		name  string
		in    error
		check func(t *testing.T, err error)
		want  []string
	}{
		{"compile error", fmt.Errorf("loop %q: %w", "k", ce), func(t *testing.T, err error) {
			var got *CompileError
			if !errors.As(err, &got) || got.Compiler != ce.Compiler || got.SourcePath != ce.SourcePath || got.Output != ce.Output {
				t.Errorf("errors.As *CompileError: %+v", got)
			}
			if !errors.Is(err, ce) {
				t.Error("the internal error is not in the chain")
			}
		}, []string{`loop "k": C compilation failed`, "oops"}},
		{"load error", fmt.Errorf("loop: %w", le), func(t *testing.T, err error) {
			var got *LoadError
			if !errors.As(err, &got) || got.Path != le.Path || got.Reason != le.Reason || got.Warnings != le.Warnings {
				t.Errorf("errors.As *LoadError: %+v", got)
			}
		}, []string{"undefined symbol: f"}},
		{"device build error", fmt.Errorf("loop: %w", de), func(t *testing.T, err error) {
			var got *DeviceBuildError
			if !errors.As(err, &got) || got.Device != "dev" || got.SourcePath != de.SourcePath || got.Log != de.Log {
				t.Errorf("errors.As *DeviceBuildError: %+v", got)
			}
		}, []string{`OpenCL program for device "dev"`, "/c/k.cl", "k.cl:1: error"}},
		{"unavailable", core.Unavailable(inner), func(t *testing.T, err error) {
			if !errors.Is(err, ErrBackendUnavailable) || !errors.Is(err, inner) || errors.Is(err, ErrNoCompiler) {
				t.Error("sentinels lost")
			}
		}, []string{"inner"}},
		{"plain", fmt.Errorf("outer: %w", inner), func(t *testing.T, err error) {
			if !errors.Is(err, inner) || errors.Is(err, ErrBackendUnavailable) {
				t.Error("chain lost, or a sentinel matched")
			}
		}, []string{"outer: inner"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := apiError(c.in)
			if msg := err.Error(); msg != prefix+c.in.Error() {
				t.Errorf("message %q, want %q", msg, prefix+c.in.Error())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			c.check(t, err)
		})
	}
	if apiError(nil) != nil {
		t.Error("apiError(nil) is not nil")
	}
	// Values a caller builds itself still print, with the prefix.
	for _, err := range []error{&CompileError{Output: "x"}, &LoadError{Reason: "x"}, &DeviceBuildError{Log: "x"}} {
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || strings.Count(msg, prefix) != 1 {
			t.Errorf("%T message %q", err, msg)
		}
	}
}

// failingBuffer is a device copy whose download always fails.
type failingBuffer struct{ err error }

func (b failingBuffer) Upload(*core.Storage) error   { return nil }
func (b failingBuffer) Download(*core.Storage) error { return b.err }
func (b failingBuffer) Owner() any                   { return b }
func (b failingBuffer) Free()                        {}

// TestSyncReportsDeviceFailure: when copying from the device fails, Sync
// returns the error (prefixed once, with the cause in its chain) and Data
// and DataRO panic with the same message; the state stays DEVICE.
func TestSyncReportsDeviceFailure(t *testing.T) {
	cause := errors.New("device lost")
	set, err := NewSet(4, "s")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDat(set, 1, []float64{1, 2, 3, 4}, "x")
	g, _ := NewGlobal(1, []int32{7}, "g")
	for _, s := range []*core.Storage{&d.s, &g.s} {
		s.Dev, s.State = failingBuffer{cause}, core.StateDevice
	}
	cases := []struct {
		name  string
		s     *core.Storage
		sync  func() error
		reads map[string]func()
	}{
		{"dat", &d.s, d.Sync, map[string]func(){"Data": func() { d.Data() }, "DataRO": func() { d.DataRO() }}},
		{"global", &g.s, g.Sync, map[string]func(){"Data": func() { g.Data() }, "DataRO": func() { g.DataRO() }}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.sync()
			if err == nil || !errors.Is(err, cause) || !strings.HasPrefix(err.Error(), prefix) || strings.Count(err.Error(), prefix) != 1 {
				t.Fatalf("Sync: %v", err)
			}
			if !strings.Contains(err.Error(), "copying "+c.s.Describe()+" from the device") {
				t.Errorf("Sync error %q does not name the data", err)
			}
			if c.s.State != core.StateDevice {
				t.Errorf("state after a failed Sync: %v", c.s.State)
			}
			for name, read := range c.reads {
				func() {
					defer func() {
						p, ok := recover().(error)
						if !ok || p.Error() != err.Error() || !errors.Is(p, cause) {
							t.Errorf("%s panicked with %v, want %v", name, p, err)
						}
					}()
					read()
				}()
			}
		})
	}
}

// TestInternalMessagesHaveNoPrefix enforces the prefix policy at its
// source: no internal package starts an error message with "op2: " (package
// op2 adds it once, in apiError, or in the messages it writes itself).
func TestInternalMessagesHaveNoPrefix(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("internal", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || !(pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); strings.HasPrefix(s, prefix) {
					t.Errorf("%s: error message %s starts with %q", fset.Position(lit.Pos()), lit.Value, prefix)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
