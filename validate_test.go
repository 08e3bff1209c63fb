package op2_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

func TestDeclarationErrors(t *testing.T) {
	nodes := must(op2.NewSet(3, "nodes"))
	edges := must(op2.NewSet(2, "edges"))
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"negative set size", second(op2.NewSet(-1, "bad")), []string{`set "bad"`, "negative size"}},
		{"map arity 0", second(op2.NewMap(edges, nodes, 0, nil, "m")), []string{`map "m"`, "arity 0"}},
		{"map wrong length", second(op2.NewMap(edges, nodes, 2, []int32{0, 1, 2}, "m")), []string{`map "m"`, "3 values given, want 4"}},
		{"map entry out of range", second(op2.NewMap(edges, nodes, 2, []int32{0, 1, 2, 3}, "pedge")),
			[]string{`map "pedge"`, "entry 3 (element 1, column 1) is 3", `target set [0,3)`}},
		{"map negative entry", second(op2.NewMap(edges, nodes, 2, []int32{0, -1, 2, 1}, "pedge")), []string{"entry 1", "is -1"}},
		{"map nil set", second(op2.NewMap(nil, nodes, 2, nil, "m")), []string{`map "m"`, "nil"}},
		{"dat dim 0", second(op2.NewDat[float64](nodes, 0, nil, "x")), []string{`dat "x"`, "dim 0"}},
		{"dat wrong length", second(op2.NewDat(nodes, 2, []float64{1, 2, 3}, "x")), []string{`dat "x"`, "3 values given, want 6"}},
		{"dat nil set", second(op2.NewDat[float64](nil, 1, nil, "x")), []string{`dat "x"`, "set is nil"}},
		{"global dim 0", second(op2.NewGlobal[float64](0, nil, "g")), []string{`global "g"`, "dim 0"}},
		{"global wrong length", second(op2.NewGlobal(2, []float64{1}, "g")), []string{`global "g"`, "1 values given"}},
		{"const bad name", second(op2.NewConst(1, []float64{1}, "not a name")), []string{"C identifier"}},
		{"const wrong length", second(op2.NewConst(2, []float64{1}, "c2")), []string{`const "c2"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.err, c.want...) })
	}
	c := must(op2.NewConst(1, []float64{1}, "dupconst"))
	defer c.Remove()
	wantErr(t, second(op2.NewConst(1, []float64{1}, "dupconst")), "already declared")
	wantErr(t, c.Set(1, 2), `const "dupconst"`, "2 values given")
}

func second[T any](_ T, err error) error { return err }

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestLoopValidationErrors(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(3, "edges"))
	cells := must(op2.NewSet(2, "cells"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "pedge"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 2, 3}, "pcell"))
	x := must(op2.NewDat[float64](nodes, 2, nil, "x"))
	xf := must(op2.NewDat[float32](nodes, 2, nil, "xf"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	q := must(op2.NewDat[float64](cells, 1, nil, "q"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	big := must(op2.NewGlobal[float64](op2.MaxReductionDim+1, nil, "big"))
	one := op2.NewKernel("void one(double *a) { }", "one")
	two := op2.NewKernel("void two(double *a, double *b) { }", "two")
	vec := op2.NewKernel("void vec(double **a) { }", "vec")

	cases := []struct {
		name string
		k    *op2.Kernel
		set  *op2.Set
		args []op2.Arg
		want []string
	}{
		{"nil kernel", nil, edges, nil, []string{"kernel is nil"}},
		{"nil set", one, nil, []op2.Arg{w.Arg(op2.Read)}, []string{"iteration set is nil"}},
		{"too few arguments", two, edges, []op2.Arg{w.Arg(op2.Read)}, []string{`loop "two" over set "edges"`, "takes 2 parameters", "passes 1"}},
		{"one argument too many", one, edges, []op2.Arg{w.Arg(op2.Read), w.Arg(op2.Read)}, []string{"takes 1 parameter but the loop passes 2 arguments"}},
		{"variadic kernel", op2.NewKernel("void va(double *a, ...) { }", "va"), edges, []op2.Arg{w.Arg(op2.Read), w.Arg(op2.Read)},
			[]string{`kernel "va" is variadic`, "one named parameter per argument"}},
		{"comment left open", op2.NewKernel("void open(double *a) { } /* no end", "open"), edges, []op2.Arg{w.Arg(op2.Read)},
			[]string{`kernel "open"`, "a /* comment at line 1 that no */ closes"}},
		{"empty argument", one, edges, []op2.Arg{{}}, []string{"argument 0", "empty argument"}},
		{"direct dat on another set", one, edges, []op2.Arg{q.Arg(op2.Read)},
			[]string{`loop "one" over set "edges"`, "argument 0", `dat "q"`, `lives on set "cells"`}},
		{"map from another set", one, edges, []op2.Arg{x.ArgMap(op2.Read, pcell, 0)},
			[]string{"argument 0", `map "pcell" goes from set "cells"`, `loop's set "edges"`}},
		{"map to another set", one, edges, []op2.Arg{w.ArgMap(op2.Read, pedge, 0)},
			[]string{`map "pedge" goes to set "nodes"`, `dat lives on set "edges"`}},
		{"map index past arity", one, edges, []op2.Arg{x.ArgMap(op2.Read, pedge, 2)},
			[]string{"index 2 is out of range", `map "pedge" of arity 2`}},
		{"negative map index", one, edges, []op2.Arg{x.ArgMap(op2.Read, pedge, -1)}, []string{"index -1 is out of range"}},
		{"nil map", one, edges, []op2.Arg{x.ArgMap(op2.Read, nil, 0)}, []string{"map is nil"}},
		{"global write", one, edges, []op2.Arg{g.Arg(op2.Write)}, []string{`global "g"`, "access WRITE is not allowed for a Global"}},
		{"global rw", one, edges, []op2.Arg{g.Arg(op2.RW)}, []string{"access RW is not allowed for a Global"}},
		{"huge reduction global", one, edges, []op2.Arg{big.Arg(op2.Inc)}, []string{`global "big"`, "at most 1024 values"}},
		{"dat min", one, edges, []op2.Arg{w.Arg(op2.Min)}, []string{"access MIN applies to a Dat only through a map"}},
		{"type mismatch", one, edges, []op2.Arg{xf.ArgMap(op2.Read, pedge, 0)},
			[]string{"argument 0", `dat "xf" (float32`, "element type float64", "data is float32"}},
		{"vector arg to a T* parameter", one, edges, []op2.Arg{x.ArgVec(op2.Read, pedge)}, []string{"pointer to pointers"}},
		{"T** parameter for a plain arg", vec, edges, []op2.Arg{w.Arg(op2.Read)}, []string{"should be a pointer (T* or T[], or the untyped void *)"}},
		{"kernel function missing", op2.NewKernel("void other(double *a) {}", "missing"), edges, []op2.Arg{w.Arg(op2.Read)},
			[]string{`kernel "missing"`, "no definition of function"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := op2.ReadStats()
			err := op2.ParLoop(c.k, c.set, c.args...)
			wantErr(t, err, c.want...)
			_, err2 := op2.NewLoop(c.k, c.set, c.args...)
			wantErr(t, err2, c.want...)
			if s := op2.ReadStats(); s.Generations != before.Generations {
				t.Errorf("a rejected loop generated code")
			}
		})
	}
}

func TestLoopObjectGenerateAndCompute(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(10, "s"))
		x := must(op2.NewDat(set, 1, iota32[float64](10), "x"))
		k := op2.NewKernel("void dbl(double *x) { *x *= 2; }", "dbl")
		l := must(op2.NewLoop(k, set, x.Arg(op2.RW)))
		if l.Backend() != op2.Backend() {
			t.Errorf("loop backend %q, want %q", l.Backend(), op2.Backend())
		}
		before := op2.ReadStats()
		src := must(l.Generate())
		if op2.ReadStats().Compiles != before.Compiles {
			t.Error("Generate compiled code")
		}
		entry := map[string]string{"sequential": "op2_loop", "openmp": "op2_loop", "opencl": "__kernel"}[op2.Backend()]
		for _, want := range []string{"kernel dbl", "double *x)", entry, "*x *= 2"} {
			if !strings.Contains(src, want) {
				t.Errorf("generated source lacks %q:\n%s", want, src)
			}
		}
		if x.Data()[3] != 3 {
			t.Error("Generate ran the loop")
		}
		check(t, l.Compute())
		check(t, l.Compute())
		if x.Data()[3] != 12 {
			t.Errorf("after two Compute calls x[3] = %v, want 12", x.Data()[3])
		}
		if src2 := must(l.Generate()); src2 != src {
			t.Error("Generate after Compute returned different source")
		}
	})
}

func TestUnknownBackend(t *testing.T) {
	err := op2.Use("no-such-backend")
	wantErr(t, err, `unknown backend "no-such-backend"`, "sequential", "openmp")
	check(t, op2.Use("sequential"))
}

// TestMissingCompilerSaysWhatToInstall: configuring a host backend with
// a C compiler that does not exist fails at once, naming the compiler and
// the package to install, and leaves the previous configuration working.
func TestMissingCompilerSaysWhatToInstall(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer func() { check(t, op2.Configure(op2.Config{CacheDir: cache, PlanCheck: true})) }()
	for _, backend := range hostBackends {
		t.Run(backend, func(t *testing.T) {
			cc := filepath.Join(t.TempDir(), "no-such-dir", "gcc")
			err := op2.Configure(op2.Config{Backend: backend, CC: cc, CacheDir: t.TempDir()})
			wantErr(t, err, strconv.Quote(cc), "install gcc", "apt-get install gcc", "CC")
			if !errors.Is(err, op2.ErrNoCompiler) {
				t.Errorf("error does not match ErrNoCompiler: %v", err)
			}
			_, err = op2.NewRuntime(op2.Config{Backend: backend, CC: cc, CacheDir: t.TempDir()})
			wantErr(t, err, "apt-get install gcc")
			// The previous configuration still runs loops.
			set := must(op2.NewSet(3, "s"))
			x := must(op2.NewDat[float64](set, 1, nil, "x"))
			check(t, op2.ParLoop(op2.NewKernel("void one(double *x) { *x = 1; }", "one"), set, x.Arg(op2.Write)))
		})
	}
}
