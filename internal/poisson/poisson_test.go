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
}

// TestSameOnOpenMP: the openmp backend (coloured assembly, threaded
// vector loops) gives the solution sequential gives, to the solver's
// tolerance.
func TestSameOnOpenMP(t *testing.T) {
	m, err := Square(16, 0.25, 2)
	if err != nil {
		t.Fatal(err)
	}
	solve := func(backend string) []float64 {
		if err := op2.Use(backend); err != nil {
			t.Fatal(err)
		}
		defer op2.Use("sequential")
		res, err := Solve(m, Problems["sine"], op2.SolverOptions{RTol: 1e-13})
		if err != nil {
			t.Fatal(err)
		}
		return res.U.DataRO()
	}
	seq, omp := solve("sequential"), solve("openmp")
	for i := range seq {
		if d := seq[i] - omp[i]; d > 1e-11 || d < -1e-11 {
			t.Fatalf("u[%d]: sequential %v, openmp %v", i, seq[i], omp[i])
		}
	}
}

// BenchmarkStiffness assembles the stiffness matrix of a 1 002 528-triangle
// mesh (n = 708) once per iteration, on the default runtime's backend
// (OP2_BACKEND, OMP_NUM_THREADS). A first assembly, not timed, compiles
// the loop, builds its plan (openmp: 30-50 ms, which over 10 timed
// iterations would add 3-5 ns per triangle) and touches the matrix.
func BenchmarkStiffness(b *testing.B) {
	m, err := Square(708, 0.2, 1)
	if err != nil {
		b.Fatal(err)
	}
	a, err := newAssembly(m, Problems["sine"])
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
