package poisson

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh/topology"
	"github.com/goop2/op2/mesh/unstructured"
)

// The matrix-assembly loops of the package with SIMD lanes and without:
// the 2-D and 3-D stiffness matrices and, for a kernel with little
// arithmetic per entry, the 2-D P1 mass matrix.

// massKernel adds a triangle's P1 mass matrix, area/12 × (1 + δij): a
// determinant, one division and nine stores, the least work a matrix
// kernel does.
const massKernel = `void mass(const double *x[3], double *K) {
  double det = (x[1][0] - x[0][0]) * (x[2][1] - x[0][1]) - (x[2][0] - x[0][0]) * (x[1][1] - x[0][1]);
  double d = det / 24.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) K[i * 3 + j] = i == j ? 2.0 * d : d;
}
`

// mass adds the element mass matrices into a.K.
func (a *assembly) mass() error {
	return op2.ParLoop(op2.NewKernel(massKernel, "mass"), a.cells, a.x.ArgVec(op2.Read, a.cellNodes), a.K.Arg(op2.Inc, a.cellNodes, a.cellNodes))
}

// tetAssembly declares Cube(n) (6n³ tetrahedra, the nodes numbered x
// fastest, not renumbered) with its 3-D assembly, SolveMesh3's.
func tetAssembly(n int) (*assembly, error) {
	m, err := unstructured.Declare(unstructured.Cube(n), unstructured.Options{Renumber: "none"})
	if err != nil {
		return nil, err
	}
	p := Problems3["sine"]
	return newMeshAssembly(m, topology.Tetrahedron, tetSource(p), "tet_", func(x []float64) float64 { return p.Exact(x[0], x[1], x[2]) })
}

// BenchmarkTetStiffness assembles the 3-D stiffness matrix of a
// 1 053 696-tetrahedron box (Cube(56), 185 193 nodes) once per
// iteration, on the default runtime's backend (OP2_BACKEND,
// OMP_NUM_THREADS, OP2_SIMD), after a first assembly, not timed, as
// BenchmarkStiffness.
func BenchmarkTetStiffness(b *testing.B) {
	a, err := tetAssembly(56)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.stiffness(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := a.stiffness(); err != nil {
			b.Fatal(err)
		}
		if err := op2.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(a.cells.GlobalSize()), "ns/tetrahedron")
}

// BenchmarkMass assembles the 2-D P1 mass matrix (massKernel) of
// BenchmarkStiffness's mesh once per iteration, as BenchmarkStiffness.
func BenchmarkMass(b *testing.B) { benchAssembly(b, (*assembly).mass) }

// TestMatrixLanes: the matrix-assembly loops (2-D and 3-D stiffness, 2-D
// mass) give the scalar sequential code's matrix with 4 and 8 SIMD lanes
// and under "auto", on sequential and on openmp with 2 threads, to
// round-off: lanes add the element matrices in element order, and only
// the contraction of a*b+c into fused multiply-adds, under flags that
// allow it, may differ between the forms (openmp adds them in another
// order too).
func TestMatrixLanes(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer op2.Configure(op2.Config{CacheDir: cache})
	sq, err := Square(20, 0.25, 4)
	if err != nil {
		t.Fatal(err)
	}
	matrices := func(t *testing.T, cfg op2.Config) map[string][]float64 {
		cfg.CacheDir = cache
		if err := op2.Configure(cfg); err != nil {
			t.Fatal(err)
		}
		out := map[string][]float64{}
		values := func(name string, K *op2.Mat[float64], assemble func() error) {
			if err := assemble(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_, _, v, err := K.Values()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out[name] = v
		}
		a, err := newAssembly(sq, Problems["sine"], "")
		if err != nil {
			t.Fatal(err)
		}
		values("stiffness", a.K, a.stiffness)
		a, err = newAssembly(sq, Problems["sine"], "")
		if err != nil {
			t.Fatal(err)
		}
		values("mass", a.K, a.mass)
		ta, err := tetAssembly(5)
		if err != nil {
			t.Fatal(err)
		}
		values("tet_stiffness", ta.K, ta.stiffness)
		return out
	}
	want := matrices(t, op2.Config{Backend: "sequential", SIMD: "off"})
	for _, cfg := range []op2.Config{
		{Backend: "sequential", SIMD: "4"}, {Backend: "sequential", SIMD: "8"}, {Backend: "sequential"},
		{Backend: "openmp", Threads: 2, SIMD: "8"}, {Backend: "openmp", Threads: 2},
	} {
		name := fmt.Sprintf("%s SIMD=%q", cfg.Backend, cfg.SIMD)
		got := matrices(t, cfg)
		for k, w := range want {
			g := got[k]
			if len(g) != len(w) {
				t.Fatalf("%s, %s: %d values, scalar %d", name, k, len(g), len(w))
			}
			scale := 0.0
			for _, v := range w {
				scale = max(scale, math.Abs(v))
			}
			for i := range w {
				if math.Abs(g[i]-w[i]) > 1e-14*scale {
					t.Fatalf("%s, %s: value %d is %.17g, scalar %.17g", name, k, i, g[i], w[i])
				}
			}
		}
	}
}
