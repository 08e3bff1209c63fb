package op2_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/sigstack"
)

// matResult is what the matrix scenario computes, gathered on rank 0.
type matResult struct {
	Dense [][]float64 // the assembled matrix, declared numbering
	X     []float64   // the CG solution of A x = A x*
	XStar []float64
	Rows  int // this rank's rows (Shape)
	// The matrix gathered in scalar compressed row form.
	RowPtr, ColIdx []int32
	Vals           []float64
}

// matScenario declares a graph (rank 0 declares it all), partitions it
// with partitioner ("" for no Partition: one process), assembles A = L +
// I + a skew part on nodes with dim 2 through two map pairs, computes
// b = A x* and solves A x = b with BiCGStab (natively, or as opts says),
// or with opts.Method when it names one.
func matScenario(t *testing.T, partitioner string, opts op2.SolverOptions) matResult {
	const nn, dim = 120, 2
	rng := rand.New(rand.NewPCG(12, 34))
	var tab []int32
	for i := 1; i < nn; i++ {
		tab = append(tab, int32(rng.IntN(i)), int32(i))
	}
	for range nn {
		if a, b := rng.IntN(nn), rng.IntN(nn); a != b {
			tab = append(tab, int32(a), int32(b))
		}
	}
	xs := make([]float64, nn*dim)
	for i := range xs {
		xs[i] = float64(rng.IntN(9)) - 4
	}
	n := func(total int) int { // rank 0 declares everything
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	edges := must(op2.NewSet(n(len(tab)/2), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab[:2*n(len(tab)/2)], "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n(nn)), "ident"))
	xstar := must(op2.NewDat(nodes, dim, xs[:dim*n(nn)], "x*"))
	b := must(op2.NewDat[float64](nodes, dim, nil, "b"))
	x := must(op2.NewDat[float64](nodes, dim, nil, "x"))
	if partitioner != "" {
		// owners: the even nodes on the first rank, the odd ones on the
		// last, the ranks between empty.
		owner := make([]int32, n(nn))
		for i := range owner {
			owner[i] = int32(i%2) * int32(op2.Ranks()-1)
		}
		p := map[string]op2.Partitioner{"block": op2.BlockPartitioner(), "ptscotch": op2.PTScotchPartitioner(pedge),
			"owners": op2.OwnerPartitioner(must(op2.NewDat(nodes, 1, owner, "owner")))}[partitioner]
		must(op2.Partition(p))
	}
	sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	edge := op2.NewKernel(`
void edge(double *A) {
  for (int a = 0; a < 2; a++) {
    A[a * 4 + a] = 1; A[a * 4 + 2 + a] = -0.5;
    A[(2 + a) * 4 + a] = -1.5; A[(2 + a) * 4 + 2 + a] = 1;
  }
}`, "edge")
	node := op2.NewKernel(`void node(double *A) { A[0] = 2; A[3] = 2; A[1] = 0.25; }`, "node")
	check(t, op2.ParLoop(edge, edges, A.Arg(op2.Inc, pedge, pedge)))
	check(t, op2.ParLoop(node, nodes, A.Arg(op2.Inc, ident, ident)))
	var out matResult
	out.Rows, _ = sp.Shape()
	out.Dense = must(A.Dense())
	out.RowPtr, out.ColIdx, out.Vals = must3(A.Gather())
	check(t, A.Mult(xstar, b))
	if opts.Method == "" {
		opts.Method, opts.RTol = "bicgstab", 1e-13
	}
	s := must(op2.NewSolver(opts))
	info, err := s.Solve(A, x, b)
	check(t, err)
	if !info.Converged {
		t.Fatalf("rank %d: %+v", op2.Rank(), info)
	}
	if opts.Package == "petsc" {
		if sig := sigstack.Missing(); sig != 0 {
			t.Errorf("rank %d: after PETSc started, the handler of signal %d lacks SA_ONSTACK", op2.Rank(), sig)
		}
		// PETSc's copy holds this rank's rows, preallocated exactly.
		infos := must(op2.PETScMatInfo(s))
		if nnz := sp.NNZ(); len(infos) != 1 || infos[0].Mallocs != 0 || infos[0].NonzerosUnneeded != 0 || infos[0].NonzerosUsed != float64(nnz) {
			t.Errorf("rank %d: PETSc's matrix: %+v; want %d nonzeros used, none unneeded, no mallocs", op2.Rank(), infos, nnz)
		}
	}
	check(t, s.Close())
	out.X, out.XStar = must(x.Gather()), must(xstar.Gather())
	return out
}

// TestMatOnRanks assembles and solves the matrix scenario on 2 and 3
// ranks, the mesh partitioned in blocks and by PT-Scotch (and on opencl),
// and compares with one process: the gathered matrix (Dense and Gather)
// bit for bit (its entries are exact), the solution to 1e-9.
func TestMatOnRanks(t *testing.T) {
	matOnRanks(t, op2.SolverOptions{}, ranksCase{2, "block", []string{"OP2_MAT_BACKEND=opencl", "OP2_DEVICE_SCHEME=atomics"}})
}

// TestPETScOnRanks is TestMatOnRanks solving with PETSc: its rows are
// numbered contiguously over the ranks, its halo columns by their
// owners' numbers.
func TestPETScOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		needPETSc(t)
	}
	matOnRanks(t, op2.SolverOptions{Package: "petsc"}, ranksCase{3, "owners", nil})
}

// TestPETScDirectOnRanks is TestPETScOnRanks with a distributed direct
// solve: MUMPS's LU factorisation (KSP preonly), which starts from zero.
func TestPETScDirectOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		needPETSc(t)
	}
	matOnRanks(t, op2.SolverOptions{Package: "petsc", Method: "preonly", Precond: "lu", PETScOptions: "-pc_factor_mat_solver_type mumps"})
}

// ranksCase is a number of ranks, the partitioner that spreads the mesh
// over them, and the ranks' extra environment (OP2_MAT_BACKEND: the
// backend they run on).
type ranksCase struct {
	ranks       int
	partitioner string
	env         []string
}

// matOnRanks runs the matrix scenario with opts on 2 ranks (block
// partition), 3 ranks (PT-Scotch) and the extra cases, and compares each
// with one process.
func matOnRanks(t *testing.T, opts op2.SolverOptions, extra ...ranksCase) {
	if mpitest.InRanks() {
		var want matResult
		b, err := os.ReadFile(os.Getenv("OP2_MAT_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		if b := os.Getenv("OP2_MAT_BACKEND"); b != "" {
			check(t, op2.Use(b))
			defer op2.Use("sequential")
		}
		got := matScenario(t, os.Getenv("OP2_MPI_PARTITIONER"), opts)
		if r := op2.Rank(); os.Getenv("OP2_MPI_PARTITIONER") == "owners" && r > 0 && r < op2.Ranks()-1 && got.Rows != 0 {
			t.Errorf("rank %d holds %d rows; the owners partition leaves it empty", r, got.Rows)
		}
		if got.Rows >= want.Rows {
			t.Errorf("rank %d holds %d of the %d rows: the matrix is not distributed", op2.Rank(), got.Rows, want.Rows)
		}
		if op2.Rank() == 0 {
			for i := range want.Dense {
				for j := range want.Dense[i] {
					if got.Dense[i][j] != want.Dense[i][j] {
						t.Fatalf("on %d ranks A[%d][%d] = %v, one process %v", op2.Ranks(), i, j, got.Dense[i][j], want.Dense[i][j])
					}
				}
			}
			if !slices.Equal(got.RowPtr, want.RowPtr) || !slices.Equal(got.ColIdx, want.ColIdx) || !slices.Equal(got.Vals, want.Vals) {
				t.Fatalf("on %d ranks the gathered matrix differs from one process's:\n got %v %v %v\nwant %v %v %v", op2.Ranks(), got.RowPtr, got.ColIdx, got.Vals, want.RowPtr, want.ColIdx, want.Vals)
			}
			for i := range want.X {
				if math.Abs(got.X[i]-want.XStar[i]) > 1e-9 {
					t.Fatalf("on %d ranks x[%d] = %v, want %v", op2.Ranks(), i, got.X[i], want.XStar[i])
				}
			}
		} else if got.Dense != nil || got.RowPtr != nil {
			t.Errorf("rank %d got a dense or gathered matrix; only rank 0 does", op2.Rank())
		}
		check(t, op2.Finalize())
		return
	}
	want := matScenario(t, "", opts)
	for i := range want.X {
		if math.Abs(want.X[i]-want.XStar[i]) > 1e-9 {
			t.Fatalf("one process: x[%d] = %v, want %v", i, want.X[i], want.XStar[i])
		}
	}
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	for _, r := range append([]ranksCase{{2, "block", nil}, {3, "ptscotch", nil}}, extra...) {
		name := r.partitioner
		if len(r.env) > 0 {
			name += "/opencl"
		}
		t.Run(name, func(t *testing.T) {
			if len(r.env) > 0 {
				needBackend(t, "opencl")
			}
			mpiRun(t, r.ranks, 2*time.Minute, append([]string{"OP2_MAT_EXPECT=" + path, "OP2_MPI_PARTITIONER=" + r.partitioner}, r.env...)...)
		})
	}
}

// rankChain declares, on rank 0 of the job, a chain of nn nodes joined
// by edges with its matrix sparsity (the edges' pairs and the diagonal),
// and node data given by declare (if not nil; n gives rank 0's count of
// a number of elements, the others' 0), partitions it in blocks, and
// returns the nodes, the edge map, the identity map and the sparsity.
func rankChain(t *testing.T, nn int, declare func(nodes *op2.Set, n func(int) int)) (*op2.Set, *op2.Map, *op2.Map, *op2.Sparsity) {
	n := func(k int) int {
		if op2.Rank() == 0 {
			return k
		}
		return 0
	}
	var tab []int32
	for i := 0; i+1 < nn; i++ {
		tab = append(tab, int32(i), int32(i+1))
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	edges := must(op2.NewSet(n(nn-1), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab[:2*n(nn-1)], "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n(nn)), "ident"))
	if declare != nil {
		declare(nodes, n)
	}
	must(op2.Partition(op2.BlockPartitioner()))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	return nodes, pedge, ident, sp
}

// diagSystem declares a matrix with only a diagonal on nodes (ident the
// identity map) and the Dats x and b of a system with it.
func diagSystem(nodes *op2.Set, ident *op2.Map) (*op2.Mat[float64], *op2.Dat[float64], *op2.Dat[float64]) {
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ident, Col: ident}}, "sp_diag"))
	return must(op2.NewMat[float64](sp, "A")), must(op2.NewDat[float64](nodes, 1, nil, "x")), must(op2.NewDat[float64](nodes, 1, nil, "b"))
}

// TestSolveInChainOnRanks: the built-in solver's Solve inside a Chain on
// two ranks runs the chain's loops and its own, as on one process: its
// reads of its Globals were refused as calls some ranks only may make.
func TestSolveInChainOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=30s")
		return
	}
	nodes, pedge, ident, sp := rankChain(t, 10, nil)
	A := must(op2.NewMat[float64](sp, "A"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
	s := must(op2.NewSolver(op2.SolverOptions{}))
	var info op2.SolveInfo
	check(t, op2.Chain(func() error {
		check(t, op2.ParLoop(op2.NewKernel(`void sc_e(double *A) { A[0] = 1; A[1] = -1; A[2] = -1; A[3] = 1; }`, "sc_e"), pedge.From(), A.Arg(op2.Inc, pedge, pedge)))
		check(t, op2.ParLoop(op2.NewKernel(`void sc_d(double *A) { A[0] = 1; }`, "sc_d"), nodes, A.Arg(op2.Inc, ident, ident)))
		check(t, op2.ParLoop(op2.NewKernel(`void sc_one(double *b) { b[0] = 1; }`, "sc_one"), nodes, b.Arg(op2.Write)))
		var err error
		info, err = s.Solve(A, x, b)
		return err
	}))
	if !info.Converged {
		t.Fatalf("rank %d: %+v", op2.Rank(), info)
	}
	check(t, s.Close())
	check(t, op2.Finalize())
}

// TestJacobiZeroDiagonalOnOneRank: a zero diagonal entry on one rank's
// rows fails the built-in solver's Solve on every rank (the others
// iterated, and the next reduction met the failing rank's), after which
// a loop's reduction is right everywhere.
func TestJacobiZeroDiagonalOnOneRank(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=15s")
		return
	}
	var dd *op2.Dat[float64]
	nodes, _, ident, _ := rankChain(t, 10, func(nodes *op2.Set, n func(int) int) {
		d := []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 0} // the zero: in the last row, owned by rank 1
		dd = must(op2.NewDat(nodes, 1, d[:n(10)], "d"))
	})
	A, x, b := diagSystem(nodes, ident)
	check(t, op2.ParLoop(op2.NewKernel(`void zd_dg(const double *d, double *A) { A[0] = d[0]; }`, "zd_dg"), nodes, dd.Arg(op2.Read), A.Arg(op2.Inc, ident, ident)))
	check(t, op2.ParLoop(op2.NewKernel(`void zd_one(double *b) { b[0] = 1; }`, "zd_one"), nodes, b.Arg(op2.Write)))
	s := must(op2.NewSolver(op2.SolverOptions{}))
	if _, err := s.Solve(A, x, b); err == nil || !strings.Contains(err.Error(), "zero diagonal entry") {
		t.Errorf("rank %d: Solve: %v, want the zero diagonal entry named", op2.Rank(), err)
	}
	g := must(op2.NewGlobal[float64](1, nil, "g"))
	check(t, op2.ParLoop(op2.NewKernel(`void zd_sum(const double *b, double *g) { g[0] += 3.0 * b[0]; }`, "zd_sum"), nodes, b.Arg(op2.Read), g.Arg(op2.Inc)))
	if v := g.Value(); v != 30 {
		t.Errorf("rank %d: a sum after the failed solve = %v, want 30", op2.Rank(), v)
	}
	check(t, s.Close())
	check(t, op2.Finalize())
}

// TestZeroRowsColumnsBadRowOnOneRank: a row refused on one rank fails
// ZeroRowsColumns on every rank at once (the others waited in its
// exchange until OP2_MPI_TIMEOUT aborted the job).
func TestZeroRowsColumnsBadRowOnOneRank(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	nodes, _, ident, _ := rankChain(t, 10, nil)
	A, x, b := diagSystem(nodes, ident)
	check(t, op2.ParLoop(op2.NewKernel(`void zr_dg(double *A) { A[0] = 2; }`, "zr_dg"), nodes, A.Arg(op2.Inc, ident, ident)))
	rows := []int{0}
	if op2.Rank() == op2.Ranks()-1 {
		rows = []int{99}
	}
	start := time.Now()
	err := A.ZeroRowsColumns(rows, 1, x, b)
	if err == nil || time.Since(start) > 30*time.Second {
		t.Errorf("rank %d: ZeroRowsColumns with row 99 on rank %d: %v after %v, want an error at once", op2.Rank(), op2.Ranks()-1, err, time.Since(start))
	}
	if op2.Rank() == op2.Ranks()-1 && (err == nil || !strings.Contains(err.Error(), "99")) {
		t.Errorf("rank %d: %v does not name row 99", op2.Rank(), err)
	}
	check(t, op2.Finalize())
}

// TestPETScSettingsDifferOnRanks: ranks whose PETSc solvers differ (the
// options, MaxIts) fail Solve on every rank at once, saying so and naming
// each rank's settings (with MaxIts differing rank 0 stopped after its
// iterations while rank 1 waited in PETSc for ever; with an option only
// rank 1 had, which PETSc refused there, rank 0 waited until
// OP2_MPI_TIMEOUT); then a solve with the same settings works.
func TestPETScSettingsDifferOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		needPETSc(t)
		mpitest.Run(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	nodes, _, ident, _ := rankChain(t, 10, nil)
	A, x, b := diagSystem(nodes, ident)
	check(t, op2.ParLoop(op2.NewKernel(`void pd_dg(double *A) { A[0] = 2; }`, "pd_dg"), nodes, A.Arg(op2.Inc, ident, ident)))
	check(t, op2.ParLoop(op2.NewKernel(`void pd_one(double *b) { b[0] = 1; }`, "pd_one"), nodes, b.Arg(op2.Write)))
	for _, c := range []struct {
		name        string
		mine        op2.SolverOptions // rank 1's; the others' are {Package: "petsc"}
		want, want1 string
	}{
		{"MaxIts", op2.SolverOptions{Package: "petsc", MaxIts: 1000}, "MaxIts 10000", "MaxIts 1000,"},
		{"options", op2.SolverOptions{Package: "petsc", PETScOptions: "-ksp_type nonsense"}, `options ""`, `options "-ksp_type nonsense"`},
	} {
		o := op2.SolverOptions{Package: "petsc"}
		if op2.Rank() == 1 {
			o = c.mine
		}
		s := must(op2.NewSolver(o))
		start := time.Now()
		_, err := s.Solve(A, x, b)
		if err == nil || time.Since(start) > 30*time.Second || !strings.Contains(err.Error(), "the ranks' PETSc solvers differ") ||
			!strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.want1) {
			t.Errorf("rank %d: %s differ: Solve: %v after %v, want an error at once naming %q and %q", op2.Rank(), c.name, err, time.Since(start), c.want, c.want1)
		}
		check(t, s.Close())
	}
	s := must(op2.NewSolver(op2.SolverOptions{Package: "petsc"}))
	if _, err := s.Solve(A, x, b); err != nil {
		t.Errorf("rank %d: Solve with the same settings: %v", op2.Rank(), err)
	}
	if v := x.Data(); len(v) > 0 && math.Abs(v[0]-0.5) > 1e-8 {
		t.Errorf("rank %d: x = %v, want 0.5", op2.Rank(), v)
	}
	check(t, s.Close())
	check(t, op2.Finalize())
}
