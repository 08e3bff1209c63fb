package probe_test

import (
	"errors"
	"math"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// TestSolverRankOwningNothing: on 2 ranks with every node owned
// by rank 0 (rank 1 owns nothing, so its matrix has 0 rows), the native
// CG, PETSc's CG and PETSc's direct solve (MUMPS) solve a tridiagonal
// system from x = NaN without InitialGuessNonzero, and rank 0 gathers
// the solution.
func TestSolverRankOwningNothing(t *testing.T) {
	if !mpitest.InRanks() {
		mpitest.Run(t, 2, 2*time.Minute)
		return
	}
	defer op2.Finalize()
	const nn = 30
	n := func(k int) int {
		if op2.Rank() == 0 {
			return k
		}
		return 0
	}
	var tab []int32
	vals := make([]float64, 0, 4*(nn-1))
	for e := 0; e < n(nn-1); e++ {
		tab = append(tab, int32(e), int32(e+1))
		d := func(i int) float64 { return 1 + 1.5*float64(i%5) }
		vals = append(vals, d(e), -1, -1, d(e+1))
	}
	xs := make([]float64, n(nn))
	for i := range xs {
		xs[i] = float64(i%7 - 3)
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	edges := must(op2.NewSet(n(nn-1), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	v := must(op2.NewDat(edges, 4, vals, "vals"))
	xstar := must(op2.NewDat(nodes, 1, xs, "x*"))
	owners := must(op2.NewDat(nodes, 1, make([]int32, n(nn)), "owners"))
	must(op2.Partition(op2.OwnerPartitioner(owners)))
	if op2.Rank() == 1 && nodes.Size() != 0 {
		t.Fatalf("rank 1 owns %d nodes", nodes.Size())
	}
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pedge, Col: pedge}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := op2.NewKernel(`void p37_add(const double *v, double *A) { for (int i = 0; i < 4; i++) A[i] += v[i]; }`, "p37_add")
	check(t, op2.ParLoop(k, edges, v.Arg(op2.Read), A.Arg(op2.Inc, pedge, pedge)))
	b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
	check(t, A.Mult(xstar, b))
	for _, o := range []op2.SolverOptions{
		{RTol: 1e-12},
		{Package: "petsc", RTol: 1e-12},
		{Package: "petsc", Method: "preonly", Precond: "lu", PETScOptions: "-pc_factor_mat_solver_type mumps"},
		{Package: "petsc", Method: "bicgstab", Norm: op2.NormUnpreconditioned, RTol: 1e-12},
	} {
		sv, err := op2.NewSolver(o)
		if errors.Is(err, op2.ErrPETScUnavailable) {
			t.Logf("PETSc: %v", err)
			continue
		}
		check(t, err)
		x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		for i := range x.Data() {
			x.Data()[i] = math.NaN()
		}
		info, err := sv.Solve(A, x, b)
		check(t, err)
		got := must(x.Gather())
		if op2.Rank() == 0 {
			for i, w := range xs {
				if math.Abs(got[i]-w) > 1e-8 {
					t.Errorf("%s/%s: x[%d] = %v, want %v (%+v)", o.Package, o.Method, i, got[i], w, info)
					break
				}
			}
		}
		check(t, sv.Close())
	}
}
