package op2_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// generateLoop declares a small indirect loop with a reduction.
func generateLoop() (*op2.Kernel, *op2.Set, []op2.Arg) {
	edges := must(op2.NewSet(4, "edges"))
	nodes := must(op2.NewSet(5, "nodes"))
	m := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pedge"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	w := must(op2.NewDat(edges, 1, []float64{1, 2, 3, 4}, "w"))
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	k := op2.NewKernel("void gen_inc(const double *w, double *a, double *b, double *g) { *a += *w; *b += *w; *g += *w; }", "gen_inc")
	return k, edges, []op2.Arg{w.Arg(op2.Read), x.ArgMap(op2.Inc, m, 0), x.ArgMap(op2.Inc, m, 1), g.Arg(op2.Inc)}
}

// TestGenerateEveryBackend: op2.Generate writes each registered backend's
// source without opening it, the same source the opened backend builds
// (host backends), and refuses a bad loop or an unknown backend.
func TestGenerateEveryBackend(t *testing.T) {
	k, set, args := generateLoop()
	marks := map[string]string{"sequential": "op2_loop", "openmp": "#pragma omp", "opencl": "__kernel", "cuda": "__global__"}
	for _, b := range op2.Backends() {
		src, err := op2.Generate(b, k, set, args...)
		check(t, err)
		if !strings.Contains(src, marks[b]) || !strings.Contains(src, "gen_inc") {
			t.Errorf("%s: the source lacks %q or the kernel", b, marks[b])
		}
	}
	for _, b := range hostBackends {
		check(t, op2.Use(b))
		lp := must(op2.NewLoop(k, set, args...))
		built, err := lp.Generate()
		check(t, err)
		static := must(op2.Generate(b, k, set, args...))
		if built != static {
			t.Errorf("%s: op2.Generate differs from the opened backend's source", b)
		}
	}
	check(t, op2.Use("sequential"))
	_, err := op2.Generate("sequential", k, set, args[:3]...)
	wantErr(t, err, `loop "gen_inc"`)
	_, err = op2.Generate("fortran", k, set, args...)
	wantErr(t, err, `unknown backend "fortran"`)
}

// TestGenerateWithoutOpenCLLibrary: OpenCL source is generated in a process
// where the OpenCL library cannot be loaded at all.
func TestGenerateWithoutOpenCLLibrary(t *testing.T) {
	out, err := runHelper(t, os.Getenv("OP2_CACHE_DIR"), "generate-no-opencl", "OP2_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", "OP2_BACKEND=opencl")
	if err != nil || !strings.HasPrefix(out, "ok") {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
}

// generateWithoutOpenCL is TestGenerateWithoutOpenCLLibrary's helper
// process, started with OP2_BACKEND=opencl: op2.Generate and a Loop's
// Generate give OpenCL source; the Loop's Compute says the backend is
// unavailable.
func generateWithoutOpenCL() int {
	k, set, args := generateLoop()
	src, err := op2.Generate("opencl", k, set, args...)
	if err != nil || !strings.Contains(src, "__kernel") {
		fmt.Println("generate:", err)
		return 1
	}
	lp, err := op2.NewLoop(k, set, args...)
	if err != nil {
		fmt.Println("NewLoop:", err)
		return 1
	}
	if src2, err := lp.Generate(); err != nil || src2 != src || lp.Backend() != "opencl" {
		fmt.Println("Loop.Generate:", err, lp.Backend())
		return 1
	}
	if err := lp.Compute(); !errors.Is(err, op2.ErrBackendUnavailable) {
		fmt.Println("Compute:", err)
		return 1
	}
	if err := op2.Use("opencl"); err == nil {
		fmt.Println("opencl opened although its library is missing")
		return 1
	}
	fmt.Println("ok")
	return 0
}
