package op2_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/codegen/hostc"
	"github.com/goop2/op2/internal/host"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden from the current generators")

// goldenLoops are representative loop shapes: direct, indirect, vector,
// reductions of every kind, constants, large dims, helpers.
func goldenLoops() map[string]func() (*op2.Kernel, *op2.Set, []op2.Arg) {
	mesh := func() (*op2.Set, *op2.Set, *op2.Map) {
		edges := must(op2.NewSet(6, "edges"))
		nodes := must(op2.NewSet(7, "nodes"))
		m := must(op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6}, "pedge"))
		return edges, nodes, m
	}
	return map[string]func() (*op2.Kernel, *op2.Set, []op2.Arg){
		"direct": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, _, _ := mesh()
			x := must(op2.NewDat[float64](edges, 2, nil, "x"))
			y := must(op2.NewDat[float32](edges, 1, nil, "y"))
			return op2.NewKernel("void g_direct(const double *x, float *y) { *y = (float)(x[0] + x[1]); }", "g_direct"), edges, []op2.Arg{x.Arg(op2.Read), y.Arg(op2.Write)}
		},
		"indirect_inc": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, nodes, m := mesh()
			x := must(op2.NewDat[float64](nodes, 2, nil, "x"))
			r := must(op2.NewDat[float64](nodes, 1, nil, "r"))
			return op2.NewKernel("void g_inc(const double *a, const double *b, double *ra, double *rb) { *ra += a[0] / b[1]; *rb -= a[1] / b[0]; }", "g_inc"), edges,
				[]op2.Arg{x.ArgMap(op2.Read, m, 0), x.ArgMap(op2.Read, m, 1), r.ArgMap(op2.Inc, m, 0), r.ArgMap(op2.Inc, m, 1)}
		},
		"vector_rw": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, nodes, m := mesh()
			x := must(op2.NewDat[int32](nodes, 1, nil, "x"))
			return op2.NewKernel("void g_vec(int **x) { x[0][0] += 1; x[1][0] = x[0][0]; }", "g_vec"), edges, []op2.Arg{x.ArgVec(op2.RW, m)}
		},
		"reductions": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, _, _ := mesh()
			w := must(op2.NewDat[float64](edges, 1, nil, "w"))
			s := must(op2.NewGlobal[float64](2, nil, "s"))
			lo := must(op2.NewGlobal[int64](1, nil, "lo"))
			hi := must(op2.NewGlobal[uint32](1, nil, "hi"))
			return op2.NewKernel("void g_red(const double *w, double *s, long long *lo, unsigned *hi) { s[0] += *w; s[1] += 1; *lo = *lo < 3 ? *lo : 3; *hi = *hi > 4 ? *hi : 4; }", "g_red"), edges,
				[]op2.Arg{w.Arg(op2.Read), s.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max)}
		},
		"consts_helpers": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, nodes, m := mesh()
			x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
			v := must(op2.NewDat[float64](nodes, 1, nil, "v"))
			return op2.NewKernel("static double twice(const double *v) { return *v / g_gain / 2; }\nvoid g_const(double *a, double *b) { *a += twice(b) + g_tab[1]; }", "g_const"), edges,
				[]op2.Arg{x.ArgMap(op2.Inc, m, 0), v.ArgMap(op2.Read, m, 1)}
		},
		"large_dim": func() (*op2.Kernel, *op2.Set, []op2.Arg) {
			edges, nodes, m := mesh()
			x := must(op2.NewDat[float64](nodes, 300, nil, "x"))
			y := must(op2.NewDat[float64](edges, 1, nil, "y"))
			return op2.NewKernel("void g_big(const double *x, double *y) { *y = x[299]; }", "g_big"), edges, []op2.Arg{x.ArgMap(op2.Read, m, 1), y.Arg(op2.Write)}
		},
	}
}

// TestGeneratedSourceUnchanged: every backend's generated source for
// representative loops is the one in testdata/golden; refactorings of the
// generators must not change it (run with -update-golden to accept a
// deliberate change).
func TestGeneratedSourceUnchanged(t *testing.T) {
	// Check mode generates other code (READ arguments copied back): the
	// golden sources are normal mode's, which the runtime names,
	// whatever OP2_CHECK says.
	r := must(op2.NewRuntime(op2.Config{}.Explicit("Check")))
	// The host backends' lanes follow the machine's vectors: pin them
	// to AVX-512's, so that the golden sources are every machine's.
	defer func(v func() hostc.Vectors) { host.VectorBytes = v }(host.VectorBytes)
	host.VectorBytes = func() hostc.Vectors { return hostc.Vectors{Loops: 64, Matrix: 64} }
	gain := must(op2.NewConstIn(r, 1, []float64{1.5}, "g_gain"))
	defer gain.Remove()
	tab := must(op2.NewConstIn(r, 3, []float64{1, 2, 3}, "g_tab"))
	defer tab.Remove()
	for name, mk := range goldenLoops() {
		k, set, args := mk()
		for _, b := range []string{"sequential", "openmp", "opencl", "cuda"} {
			src, err := r.Generate(b, k, set, args...)
			check(t, err)
			path := filepath.Join("testdata", "golden", fmt.Sprintf("%s.%s.txt", name, b))
			if *updateGolden {
				check(t, os.MkdirAll(filepath.Dir(path), 0o755))
				check(t, os.WriteFile(path, []byte(src), 0o644))
				continue
			}
			want, err := os.ReadFile(path)
			check(t, err)
			if string(want) != src {
				t.Errorf("%s on %s: the generated source differs from %s", name, b, path)
			}
		}
	}
}
