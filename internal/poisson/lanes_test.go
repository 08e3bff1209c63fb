package poisson

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/goop2/op2"
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

// tetMesh is a tetrahedral mesh: its nodes' coordinates (3 per node)
// and each tetrahedron's 4 nodes.
type tetMesh struct {
	nodes int
	x     []float64
	tet   []int32
}

// box3 cuts the unit cube into n³ cubes of six tetrahedra each (along
// each cube's main diagonal), positively oriented, the nodes numbered
// x fastest, as cmd/advect's generated cube.
func box3(n int) *tetMesh {
	p := n + 1
	m := &tetMesh{nodes: p * p * p}
	for l := range p {
		for j := range p {
			for i := range p {
				m.x = append(m.x, float64(i)/float64(n), float64(j)/float64(n), float64(l)/float64(n))
			}
		}
	}
	v := func(i, j, l int) int32 { return int32(i + p*(j+p*l)) }
	det := func(t [4]int32) float64 {
		var d [3][3]float64
		for r := range 3 {
			for k := range 3 {
				d[r][k] = m.x[3*int(t[r+1])+k] - m.x[3*int(t[0])+k]
			}
		}
		return d[0][0]*(d[1][1]*d[2][2]-d[1][2]*d[2][1]) - d[0][1]*(d[1][0]*d[2][2]-d[1][2]*d[2][0]) + d[0][2]*(d[1][0]*d[2][1]-d[1][1]*d[2][0])
	}
	for l := range n {
		for j := range n {
			for i := range n {
				q := [8]int32{v(i, j, l), v(i+1, j, l), v(i+1, j+1, l), v(i, j+1, l), v(i, j, l+1), v(i+1, j, l+1), v(i+1, j+1, l+1), v(i, j+1, l+1)}
				for _, c := range [][3]int{{1, 2, 6}, {1, 5, 6}, {3, 2, 6}, {3, 7, 6}, {4, 5, 6}, {4, 7, 6}} {
					t := [4]int32{q[0], q[c[0]], q[c[1]], q[c[2]]}
					if det(t) < 0 {
						t[1], t[2] = t[2], t[1]
					}
					m.tet = append(m.tet, t[:]...)
				}
			}
		}
	}
	return m
}

// tetAssembly is a tetrahedral mesh declared with its stiffness matrix:
// directly, not through mesh/unstructured as SolveMesh3 does, and not
// renumbered (box3's numbering is local already).
type tetAssembly struct {
	tets *op2.Set
	ptet *op2.Map
	x    *op2.Dat[float64]
	K    *op2.Mat[float64]
	src  string
}

func newTetAssembly(m *tetMesh) (*tetAssembly, error) {
	nodes, err := op2.NewSet(m.nodes, "nodes")
	if err != nil {
		return nil, err
	}
	a := &tetAssembly{src: tetSource(Problems3["sine"])}
	if a.tets, err = op2.NewSet(len(m.tet)/4, "tetrahedra"); err != nil {
		return nil, err
	}
	if a.ptet, err = op2.NewMap(a.tets, nodes, 4, m.tet, "ptet"); err != nil {
		return nil, err
	}
	if a.x, err = op2.NewDat(nodes, 3, m.x, "x"); err != nil {
		return nil, err
	}
	sp, err := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: a.ptet, Col: a.ptet}}, "P1 tetrahedra")
	if err != nil {
		return nil, err
	}
	if a.K, err = op2.NewMat[float64](sp, "K"); err != nil {
		return nil, err
	}
	return a, nil
}

// stiffness adds the element stiffness matrices into a.K (SolveMesh3's
// loop).
func (a *tetAssembly) stiffness() error {
	return op2.ParLoop(op2.NewKernel(a.src, "tet_stiffness"), a.tets, a.x.ArgVec(op2.Read, a.ptet), a.K.Arg(op2.Inc, a.ptet, a.ptet))
}

// BenchmarkTetStiffness assembles the 3-D stiffness matrix of a
// 1 053 696-tetrahedron box (box3(56), 185 193 nodes) once per
// iteration, on the default runtime's backend (OP2_BACKEND,
// OMP_NUM_THREADS, OP2_SIMD), after a first assembly, not timed, as
// BenchmarkStiffness.
func BenchmarkTetStiffness(b *testing.B) {
	m := box3(56)
	a, err := newTetAssembly(m)
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
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(m.tet)/4), "ns/tetrahedron")
}

// BenchmarkMass assembles the 2-D P1 mass matrix (massKernel) of
// BenchmarkStiffness's mesh once per iteration, as BenchmarkStiffness.
func BenchmarkMass(b *testing.B) {
	m, err := Square(708, 0.2, 1)
	if err != nil {
		b.Fatal(err)
	}
	a, err := newAssembly(m, Problems["sine"], "")
	if err != nil {
		b.Fatal(err)
	}
	if err := a.mass(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := a.mass(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(m.Tri)/3), "ns/triangle")
}

// TestMatrixLanes: the matrix-assembly loops (2-D and 3-D stiffness, 2-D
// mass) give the scalar sequential code's matrix with 4 and 8 SIMD lanes
// and under "auto", on sequential and on openmp with 2 threads, to
// round-off: lanes add the element matrices in element order, and only
// the contraction of a*b+c into fused multiply-adds may differ between
// the forms (openmp adds them in another order too).
func TestMatrixLanes(t *testing.T) {
	cache := os.Getenv("OP2_CACHE_DIR")
	defer op2.Configure(op2.Config{CacheDir: cache})
	sq, err := Square(20, 0.25, 4)
	if err != nil {
		t.Fatal(err)
	}
	box := box3(5)
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
		ta, err := newTetAssembly(box)
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
