package op2_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// laplacianPlusIdentity assembles, on a random connected graph of n
// nodes, A = L + I (L the graph Laplacian, each edge adding
// [[1,-1],[-1,1]] times the identity of the block dim): symmetric
// positive definite.
func laplacianPlusIdentity(t *testing.T, r *op2.Runtime, rng *rand.Rand, n, dim int) (*op2.Set, *op2.Mat[float64]) {
	return laplacianPlus(t, r, rng, n, dim, 0)
}

// laplacianPlus is laplacianPlusIdentity plus skew times a skew-symmetric
// part per edge ([[0, skew], [-skew, 0]]): nonsymmetric, with a positive
// definite symmetric part.
func laplacianPlus(t *testing.T, r *op2.Runtime, rng *rand.Rand, n, dim int, skew float64) (*op2.Set, *op2.Mat[float64]) {
	nodes := must(op2.NewSet(n, "nodes"))
	var tab []int32
	for i := 1; i < n; i++ {
		tab = append(tab, int32(rng.IntN(i)), int32(i))
	}
	for range n {
		a, b := rng.IntN(n), rng.IntN(n)
		if a != b {
			tab = append(tab, int32(a), int32(b))
		}
	}
	edges := must(op2.NewSet(len(tab)/2, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n), "ident"))
	sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	d := fmt.Sprint(dim)
	edge := op2.NewKernel(`#define D `+d+`
#define S `+fmt.Sprint(skew)+`
void edge(double *A) {
  for (int a = 0; a < D; a++) {
    A[a * 2 * D + a] = 1; A[a * 2 * D + D + a] = -1 + S;
    A[(D + a) * 2 * D + a] = -1 - S; A[(D + a) * 2 * D + D + a] = 1;
  }
}`, "edge")
	node := op2.NewKernel(`#define D `+d+`
void node(double *A) { for (int a = 0; a < D; a++) A[a * D + a] = 1; }`, "node")
	check(t, r.ParLoop(edge, edges, A.Arg(op2.Inc, pedge, pedge)))
	check(t, r.ParLoop(node, nodes, A.Arg(op2.Inc, ident, ident)))
	return nodes, A
}

// TestSolveKnown solves A x = b for b = A x* with the built-in conjugate
// gradients and BiCGStab (also on a nonsymmetric matrix) on sequential
// and openmp, with and without Jacobi, and checks x against x*.
func TestSolveKnown(t *testing.T) {
	for _, cfg := range []op2.Config{{Backend: "sequential"}, {Backend: "openmp", Threads: 2}} {
		for _, method := range []string{"cg", "bicgstab"} {
			for _, pc := range []string{"jacobi", "none"} {
				for _, dim := range []int{1, 2} {
					skew := 0.0
					if method == "bicgstab" && dim == 2 {
						skew = 0.7 // nonsymmetric
					}
					t.Run(fmt.Sprintf("%s/%s/%s/dim%d", cfg.Backend, method, pc, dim), func(t *testing.T) {
						solveKnown(t, cfg, method, pc, dim, skew)
					})
				}
			}
		}
	}
}

// solveKnown solves A x = b for b = A x* and checks x against x*.
func solveKnown(t *testing.T, cfg op2.Config, method, pc string, dim int, skew float64) {
	r := must(op2.NewRuntime(cfg))
	rng := rand.New(rand.NewPCG(uint64(dim), 4))
	n := 300
	nodes, A := laplacianPlus(t, r, rng, n, dim, skew)
	xs := make([]float64, n*dim)
	for i := range xs {
		xs[i] = rng.Float64()*2 - 1
	}
	want := must(op2.NewDat(nodes, dim, xs, "x*"))
	b := must(op2.NewDat[float64](nodes, dim, nil, "b"))
	check(t, A.Mult(want, b))
	x := must(op2.NewDat[float64](nodes, dim, nil, "x"))
	s := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: pc, RTol: 1e-12, Runtime: r}))
	info, err := s.Solve(A, x, b)
	check(t, err)
	if !info.Converged || info.Iterations < 2 || info.Iterations > n*dim {
		t.Fatalf("%+v", info)
	}
	for i, v := range x.DataRO() {
		if math.Abs(v-xs[i]) > 1e-9 {
			t.Fatalf("x[%d] = %v, want %v (%+v)", i, v, xs[i], info)
		}
	}
	// Started from the solution: no iteration.
	s = must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: pc, RTol: 1e-12, Runtime: r, InitialGuessNonzero: true}))
	info, err = s.Solve(A, x, b)
	check(t, err)
	if !info.Converged || info.Iterations > 1 {
		t.Fatalf("from the solution: %+v", info)
	}
}

// TestSolveLimits: MaxIts stops without an error; a matrix that is not
// positive definite breaks down with an error saying so; a zero diagonal
// stops Jacobi.
func TestSolveLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	nodes, A := laplacianPlusIdentity(t, op2.Default(), rng, 50, 1)
	b := must(op2.NewDat(nodes, 1, iota32[float64](50), "b"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	s := must(op2.NewSolver(op2.SolverOptions{MaxIts: 2, RTol: 1e-14}))
	info, err := s.Solve(A, x, b)
	if err != nil || info.Converged || info.Iterations != 2 || !strings.Contains(info.Reason, "2 iterations (MaxIts)") {
		t.Fatalf("MaxIts: %+v %v", info, err)
	}
	// -I (every row zeroed, -1 on the diagonal): negative definite.
	neg := must(op2.NewMat[float64](A.Sparsity(), "negI"))
	all := make([]int, 50)
	for i := range all {
		all[i] = i
	}
	check(t, neg.ZeroRows(all, -1))
	x2 := must(op2.NewDat[float64](nodes, 1, nil, "x2"))
	_, err = must(op2.NewSolver(op2.SolverOptions{Precond: "none"})).Solve(neg, x2, b)
	if err == nil || !strings.Contains(err.Error(), "broke down") || !strings.Contains(err.Error(), "not symmetric positive definite") {
		t.Fatalf("negative definite: %v", err)
	}
	zero := must(op2.NewMat[float64](A.Sparsity(), "zero"))
	_, err = must(op2.NewSolver(op2.SolverOptions{})).Solve(zero, x2, b)
	if err == nil || !strings.Contains(err.Error(), "zero diagonal entry in scalar row 0") {
		t.Fatalf("zero diagonal: %v", err)
	}
}

// TestSolveNotFinite: a NaN or infinity in b, in the matrix, or a
// diverging iteration ends the solve with an error at once, for both
// methods; b = 0 gives x = 0 without iterating; an absolute tolerance
// alone (RTol 0) is met.
func TestSolveNotFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	nodes, A := laplacianPlusIdentity(t, op2.Default(), rng, 40, 1)
	ones := make([]float64, 40)
	for i := range ones {
		ones[i] = 1
	}
	nanB := slices.Clone(ones)
	nanB[7] = math.NaN()
	hugeB := slices.Clone(ones)
	hugeB[3] = 1e300
	nanA := must(op2.NewMat[float64](A.Sparsity(), "nanA"))
	all := make([]int, 40)
	for i := range all {
		all[i] = i
	}
	check(t, nanA.ZeroRows(all, math.NaN()))
	for _, method := range []string{"cg", "bicgstab"} {
		for _, tc := range []struct {
			name string
			A    *op2.Mat[float64]
			b    []float64
			want string
		}{
			{"NaN in b", A, nanB, "right-hand side"},
			{"huge b", A, hugeB, "right-hand side"},
			{"NaN in A", nanA, ones, "NaN"},
		} {
			for _, guess := range []bool{false, true} {
				b := must(op2.NewDat(nodes, 1, tc.b, "b"))
				x := must(op2.NewDat(nodes, 1, ones, "x"))
				info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: "none", InitialGuessNonzero: guess})).Solve(tc.A, x, b)
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "positive definite") || info.Iterations > 1 {
					t.Errorf("%s, %s, nonzero guess %v: %+v, %v; want an error about %q at once", method, tc.name, guess, info, err, tc.want)
				}
			}
		}
		// b = 0: x = 0 at once, whatever x started from.
		b := must(op2.NewDat[float64](nodes, 1, nil, "b0"))
		x := must(op2.NewDat(nodes, 1, ones, "x"))
		info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, InitialGuessNonzero: true})).Solve(A, x, b)
		if err != nil || !info.Converged || info.Iterations != 0 || slices.ContainsFunc(x.DataRO(), func(v float64) bool { return v != 0 }) {
			t.Errorf("%s, b = 0: %+v, %v, x = %v", method, info, err, x.DataRO())
		}
		// ATol alone.
		b = must(op2.NewDat(nodes, 1, iota32[float64](40), "b"))
		x = must(op2.NewDat[float64](nodes, 1, nil, "x"))
		info, err = must(op2.NewSolver(op2.SolverOptions{Method: method, ATol: 1e-9})).Solve(A, x, b)
		if err != nil || !info.Converged || info.Residual > 1e-9 {
			t.Errorf("%s, ATol 1e-9 alone: %+v, %v", method, info, err)
		}
	}
}

// TestSolverErrors checks the options and operands refused.
func TestSolverErrors(t *testing.T) {
	for _, tc := range []struct {
		opts op2.SolverOptions
		want string
	}{
		{op2.SolverOptions{Method: "gmres"}, `method "gmres"; the built-in solver has "cg" (conjugate gradients) and "bicgstab"`},
		{op2.SolverOptions{Precond: "ilu"}, `preconditioner "ilu"`},
		{op2.SolverOptions{RTol: -1}, "tolerances -1"},
		{op2.SolverOptions{Method: "bicgstab", Norm: op2.NormNatural}, `method "bicgstab" does not support the natural norm`},
		{op2.SolverOptions{Norm: op2.NormNone}, `the native solvers do not support the norm "none"`},
		{op2.SolverOptions{Norm: op2.NormType(17)}, "norm type 17"},
		{op2.SolverOptions{Package: "petsc", Norm: -1}, "norm type -1"},
	} {
		if _, err := op2.NewSolver(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(6, 6))
	nodes, A := laplacianPlusIdentity(t, op2.Default(), rng, 10, 1)
	other := must(op2.NewSet(10, "other"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	bad := must(op2.NewDat[float64](other, 1, nil, "bad"))
	s := must(op2.NewSolver(op2.SolverOptions{}))
	if _, err := s.Solve(A, x, bad); err == nil || !strings.Contains(err.Error(), `dat "bad" (float64, dim 1) on set "other" must be on set "nodes" with dim 1`) {
		t.Errorf("b elsewhere: %v", err)
	}
	if _, err := s.Solve(A, x, x); err == nil || !strings.Contains(err.Error(), "x and b are the same") {
		t.Errorf("x = b: %v", err)
	}
	b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
	for _, s := range []*op2.Solver{{}, nil} {
		if _, err := s.Solve(A, x, b); err == nil || !strings.Contains(err.Error(), "the Solver was not made by NewSolver") {
			t.Errorf("%v.Solve: %v, want an error saying to use NewSolver", s, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%v.Close: %v", s, err)
		}
	}
}

// TestSolveVectorLoopsOnDevice runs the solver's vector loops (the fused
// loops of CG and BiCGStab among them) on the opencl backend, the matrix assembled on
// the host and its products made there, and checks x against x*.
func TestSolveVectorLoopsOnDevice(t *testing.T) {
	requireDevice(t)
	dev := must(op2.NewRuntime(op2.Config{Backend: "opencl"}))
	host := must(op2.NewRuntime(op2.Config{Backend: "sequential"}))
	for _, tc := range []struct{ method, pc string }{{"cg", "jacobi"}, {"cg", "none"}, {"bicgstab", "jacobi"}, {"bicgstab", "none"}} {
		method, pc := tc.method, tc.pc
		t.Run(method+"/"+pc, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 4))
			n := 200
			nodes, A := laplacianPlus(t, host, rng, n, 1, 0)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = rng.Float64()*2 - 1
			}
			want := must(op2.NewDat(nodes, 1, xs, "x*"))
			b := must(op2.NewDat[float64](nodes, 1, nil, "b"))
			check(t, A.Mult(want, b))
			x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
			s := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: pc, RTol: 1e-12, Runtime: dev}))
			info, err := s.Solve(A, x, b)
			check(t, err)
			if !info.Converged || info.Iterations < 2 {
				t.Fatalf("%+v", info)
			}
			for i, v := range x.DataRO() {
				if math.Abs(v-xs[i]) > 1e-9 {
					t.Fatalf("x[%d] = %v, want %v (%+v)", i, v, xs[i], info)
				}
			}
		})
	}
}

// TestSolveDiverges: CG on a matrix far from symmetric (the Laplacian
// plus identity of laplacianPlus with a skew-symmetric part 1000 times
// larger) stops with an error once the residual passes
// DivergenceTolerance times the first, as PETSc's DIVERGED_DTOL, rather
// than running on to MaxIts with a residual in the millions.
func TestSolveDiverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	nodes, A := laplacianPlus(t, op2.Default(), rng, 30, 1, 1000)
	b := must(op2.NewDat(nodes, 1, iota32[float64](30), "b"))
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	info, err := must(op2.NewSolver(op2.SolverOptions{Precond: "none", MaxIts: 2000})).Solve(A, x, b)
	if err == nil || !strings.Contains(err.Error(), "DIVERGED_DTOL") || info.Converged || info.Iterations >= 2000 {
		t.Errorf("%+v, %v; want a divergence error before MaxIts", info, err)
	}
}

// TestSolveFromGoodGuessConverges: from a nonzero initial guess the
// divergence test, as PETSc's, measures the residual against b's norm,
// not the first residual's: a guess so good that the residual grows past
// 10^5 times the first on the way (a diagonal matrix with eigenvalues
// from 1 to 1e16, x0 exact but in the 5 lowest modes) converges.
func TestSolveFromGoodGuessConverges(t *testing.T) {
	const n = 100
	nodes := must(op2.NewSet(n, "nodes"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](n), "ident"))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	lambda, x0, ones := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		lambda[i] = math.Pow(1e16, float64(i)/(n-1))
		x0[i], ones[i] = 1/lambda[i], 1
		if i < 5 {
			x0[i] += 1e-8 * float64(i+1)
		}
	}
	l := must(op2.NewDat(nodes, 1, lambda, "l"))
	check(t, op2.ParLoop(op2.NewKernel(`void gg_diag(double *A, const double *l) { A[0] = l[0]; }`, "gg_diag"), nodes, A.Arg(op2.Inc, ident, ident), l.Arg(op2.Read)))
	x := must(op2.NewDat(nodes, 1, x0, "x"))
	b := must(op2.NewDat(nodes, 1, ones, "b"))
	info, err := must(op2.NewSolver(op2.SolverOptions{Precond: "none", RTol: 1e-8, InitialGuessNonzero: true})).Solve(A, x, b)
	if err != nil || !info.Converged {
		t.Errorf("%+v, %v; want convergence", info, err)
	}
}
