package poisson

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/testreq"
)

// TestLinearExact: P1 elements reproduce a linear solution to rounding,
// on jittered meshes, with both solvers.
func TestLinearExact(t *testing.T) {
	for _, method := range []string{"cg", "bicgstab"} {
		for _, n := range []int{3, 10} {
			m, err := Square(n, 0.3, uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Solve(m, Problems["linear"], op2.SolverOptions{Method: method, RTol: 1e-13})
			if err != nil {
				t.Fatal(err)
			}
			if res.MaxNode > 1e-10 || res.L2Error > 1e-10 || !res.Info.Converged {
				t.Fatalf("%s, n=%d: max nodal error %g, L2 error %g, %+v", method, n, res.MaxNode, res.L2Error, res.Info)
			}
		}
	}
}

// TestSecondOrder: the L2 error of a smooth solution falls by about 4
// each time the mesh spacing halves.
func TestSecondOrder(t *testing.T) {
	var errs []float64
	for _, n := range []int{8, 16, 32} {
		m, err := Square(n, 0.2, 7)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Solve(m, Problems["sine"], op2.SolverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errs = append(errs, res.L2Error)
	}
	for i := 1; i < len(errs); i++ {
		if r := errs[i-1] / errs[i]; r < 3.3 || r > 4.7 {
			t.Fatalf("L2 errors %v: ratio %.2f at refinement %d, want about 4", errs, r, i)
		}
	}
	t.Logf("L2 errors %v", errs)
}

func TestSquareErrors(t *testing.T) {
	if _, err := Square(0, 0, 1); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := Square(2, 0.5, 1); err == nil {
		t.Error("jitter 0.5 accepted")
	}
	if _, err := Square(2, math.NaN(), 1); err == nil {
		t.Error("jitter NaN accepted")
	}
}

// TestSameOnEveryBackend: openmp (coloured assembly, threaded vector
// loops) and opencl in both device schemes (coloured by rows, and atomic
// additions at the block offsets) give the solution sequential gives, to
// the solver's tolerance.
func TestSameOnEveryBackend(t *testing.T) {
	m, err := Square(16, 0.25, 2)
	if err != nil {
		t.Fatal(err)
	}
	solve := func(t *testing.T, cfg op2.Config) []float64 {
		cfg.CacheDir = os.Getenv("OP2_CACHE_DIR")
		if err := op2.Configure(cfg); err != nil {
			if cfg.Backend == "opencl" {
				testreq.Check(t, "opencl", err, op2.ErrBackendUnavailable)
			}
			t.Fatal(err)
		}
		defer op2.Configure(op2.Config{CacheDir: cfg.CacheDir})
		res, err := Solve(m, Problems["sine"], op2.SolverOptions{RTol: 1e-13})
		if err != nil {
			t.Fatal(err)
		}
		return res.U.DataRO()
	}
	seq := solve(t, op2.Config{Backend: "sequential"})
	for _, cfg := range []op2.Config{
		{Backend: "openmp"},
		{Backend: "opencl", DeviceScheme: "staged"},
		{Backend: "opencl", DeviceScheme: "atomics"},
	} {
		t.Run(cfg.Backend+cfg.DeviceScheme, func(t *testing.T) {
			got := solve(t, cfg)
			for i := range seq {
				if d := seq[i] - got[i]; d > 1e-11 || d < -1e-11 {
					t.Fatalf("u[%d]: sequential %v, %s %v", i, seq[i], cfg.Backend, got[i])
				}
			}
		})
	}
}

// BenchmarkStiffness assembles the stiffness matrix of a 1 002 528-triangle
// mesh (n = 708) once per iteration, on the default runtime's backend
// (OP2_BACKEND, OMP_NUM_THREADS). A first assembly, not timed, compiles
// the loop, builds its plan (openmp: 30-50 ms, which over 10 timed
// iterations would add 3-5 ns per triangle) and touches the matrix.
func BenchmarkStiffness(b *testing.B) { benchAssembly(b, (*assembly).stiffness) }

// benchAssembly runs assemble (a matrix loop) on BenchmarkStiffness's
// mesh once per iteration after a first, untimed run, and reports the
// time per triangle.
func benchAssembly(b *testing.B, assemble func(*assembly) error) {
	m, err := Square(708, 0.2, 1)
	if err != nil {
		b.Fatal(err)
	}
	a, err := newAssembly(m, Problems["sine"], "")
	if err != nil {
		b.Fatal(err)
	}
	if err := assemble(a); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := assemble(a); err != nil {
			b.Fatal(err)
		}
		if err := op2.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(m.Tri)/3), "ns/triangle")
}

// TestOnRanks solves on 2 and 3 MPI ranks (the mesh declared on rank 0,
// partitioned by AutoPartitioner) and compares the errors with one
// process's.
func TestOnRanks(t *testing.T) {
	m, err := Square(12, 0.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	solve := func() *Result {
		res, err := Solve(m, Problems["sine"], op2.SolverOptions{RTol: 1e-13})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if mpitest.InRanks() {
		res := solve()
		want, err := strconv.ParseFloat(os.Getenv("POISSON_L2"), 64)
		if err != nil {
			t.Fatal(err)
		}
		wantMax, err := strconv.ParseFloat(os.Getenv("POISSON_MAX"), 64)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.L2Error-want) > 1e-10 || math.Abs(res.MaxNode-wantMax) > 1e-10 {
			t.Errorf("rank %d of %d: L2 error %g, largest nodal error %g; one process %g, %g", op2.Rank(), op2.Ranks(), res.L2Error, res.MaxNode, want, wantMax)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	res := solve()
	for _, ranks := range []int{2, 3} {
		t.Run(strconv.Itoa(ranks), func(t *testing.T) {
			mpitest.Run(t, ranks, 2*time.Minute, fmt.Sprintf("POISSON_L2=%.17g", res.L2Error), fmt.Sprintf("POISSON_MAX=%.17g", res.MaxNode))
		})
	}
}

// TestTriangleFiles writes a jittered mesh in Triangle's format, reads it
// back (1-based, with comments, clockwise triangles) and solves the
// linear problem on it exactly; malformed files are refused naming the
// file and line.
func TestTriangleFiles(t *testing.T) {
	dir := t.TempDir()
	m, err := Square(6, 0.3, 9)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "sq")
	if err := WriteTriangle(m, base); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTriangle(base)
	if err != nil {
		t.Fatal(err)
	}
	if back.Nodes != m.Nodes || !slices.Equal(back.X, m.X) || !slices.Equal(back.Tri, m.Tri) || !slices.Equal(back.Boundary, m.Boundary) {
		t.Fatal("the mesh read back differs")
	}
	// The same mesh 1-based, with a comment, triangles clockwise.
	var node, ele strings.Builder
	fmt.Fprintf(&node, "# a comment\n%d 2 0 1\n", m.Nodes)
	for i := 0; i < m.Nodes; i++ {
		fmt.Fprintf(&node, "%d %v %v %d # node\n", i+1, m.X[2*i], m.X[2*i+1], m.Boundary[i]*2)
	}
	fmt.Fprintf(&ele, "%d 3 1\n", len(m.Tri)/3)
	for k := 0; k < len(m.Tri)/3; k++ {
		fmt.Fprintf(&ele, "%d %d %d %d 7\n", k+1, m.Tri[3*k]+1, m.Tri[3*k+2]+1, m.Tri[3*k+1]+1)
	}
	one := filepath.Join(dir, "one")
	if err := os.WriteFile(one+".node", []byte(node.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(one+".ele", []byte(ele.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m1, err := ReadTriangle(one)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Solve(m1, Problems["linear"], op2.SolverOptions{RTol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxNode > 1e-10 {
		t.Fatalf("linear solution on the read mesh: largest nodal error %g", res.MaxNode)
	}
	for _, tc := range []struct{ node, ele, want string }{
		{"2 2 0 0\n0 0 0\n1 1 0\n", "0 3 0\n", "no boundary markers"},
		{"2 3 0 1\n", "0 3 0\n", "dimension 3"},
		{"2 2 0 1\n0 0 0 1\n1 1 0 1\n", "1 3 0\n0 0 1 5\n", `sq.ele:2: node 5 is not one of the 2 nodes`},
		{"3 2 0 1\n0 0 0 1\n1 1 0 1\n2 2 0 1\n", "1 3 0\n0 0 1 2\n", "degenerate triangle"},
		{"1 2 0 1\n0 0 x 1\n", "0 3 0\n", `sq.node:2: "x" is not a number`},
		{"-1 2 0 1\n0 0 0 1\n", "0 3 0\n", "sq.node:1: the header's node count is -1"},
		{"1e300 2 0 1\n0 0 0 1\n", "0 3 0\n", "node count is 1e+300"},
		{"4 2 -1 1\n0 0 0\n1 1 0\n2 0 1\n3 1 1\n", "0 3 0\n", "attribute count is -1"},
		{"2 2 0 1\n0 0 0 1\n1 1 0 1\n", "-1 3 0\n0 0 1 2\n", "sq.ele:1: the header's triangle count is -1"},
		{"2 2 0 1\n0 0 0 1\n1 1 0 1\n", "1.5 3 0\n0 0 1 2\n", "triangle count is 1.5"},
	} {
		if err := os.WriteFile(base+".node", []byte(tc.node), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+".ele", []byte(tc.ele), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTriangle(base); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.node, err, tc.want)
		}
	}
}

// needPETSc skips t when the PETSc library cannot be loaded here (the
// README's test command installs it).
func needPETSc(t *testing.T) {
	t.Helper()
	testreq.Check(t, "petsc", petsc.Load(), petsc.ErrUnavailable)
}

// TestPETSc: solved by PETSc, the linear solution is reproduced to
// rounding and the sine problem's errors equal the native solver's, with
// PETSc's options passed through.
func TestPETSc(t *testing.T) {
	needPETSc(t)
	m, err := Square(10, 0.3, 4)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Solve(m, Problems["linear"], op2.SolverOptions{Package: "petsc", RTol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxNode > 1e-10 || res.L2Error > 1e-10 || !res.Info.Converged {
		t.Fatalf("linear: max nodal error %g, L2 error %g, %+v", res.MaxNode, res.L2Error, res.Info)
	}
	native, err := Solve(m, Problems["sine"], op2.SolverOptions{RTol: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		options         string
		method, precond string // what runs
	}{
		{"", "cg", "jacobi"},
		{"-ksp_type gmres -pc_type gamg", "gmres", "gamg"},
	} {
		o := op2.SolverOptions{Package: "petsc", RTol: 1e-13, PETScOptions: tt.options}
		res, err := Solve(m, Problems["sine"], o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.L2Error-native.L2Error) > 1e-10 || math.Abs(res.MaxNode-native.MaxNode) > 1e-10 {
			t.Errorf("%q: L2 error %g, largest nodal %g; native %g, %g", tt.options, res.L2Error, res.MaxNode, native.L2Error, native.MaxNode)
		}
		if res.Info.Method != tt.method || res.Info.Precond != tt.precond {
			t.Errorf("%q ran %s/%s, want %s/%s", tt.options, res.Info.Method, res.Info.Precond, tt.method, tt.precond)
		}
		t.Logf("%q: %+v", tt.options, res.Info)
	}
}

// TestRenumbered: the mesh renumbered by RCM or RCB before assembly gives
// the solution of the mesh's own numbering (in the declared numbering),
// and a bad ordering is refused.
func TestRenumbered(t *testing.T) {
	m, err := Square(20, 0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	solve := func(ordering string) (*Result, []float64) {
		res, err := SolveWith(m, Problems["sine"], Options{Solver: op2.SolverOptions{RTol: 1e-13}, Renumber: ordering})
		if err != nil {
			t.Fatal(err)
		}
		u, err := res.U.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return res, u
	}
	plain, want := solve("")
	for _, ordering := range []string{"rcm", "rcb"} {
		res, got := solve(ordering)
		if slices.Equal(res.U.DataRO(), got) {
			t.Errorf("%s: the nodes kept their numbering", ordering)
		}
		if math.Abs(res.L2Error-plain.L2Error) > 1e-12 {
			t.Errorf("%s: L2 error %g, unrenumbered %g", ordering, res.L2Error, plain.L2Error)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-10 {
				t.Fatalf("%s: u[%d] = %v (declared numbering), unrenumbered %v", ordering, i, got[i], want[i])
			}
		}
	}
	if _, err := SolveWith(m, Problems["sine"], Options{Renumber: "metis"}); err == nil || !strings.Contains(err.Error(), `unknown renumbering "metis"`) {
		t.Errorf("Renumber metis: %v", err)
	}
}
