package probe_test

// Probes of the native solvers' handling of NaN, infinite and zero
// right-hand sides and of an absolute tolerance (findings 2, 3, 8, 9 and
// 10 of MATRIX_FINDINGS.md). They assert the fixed behaviour and are
// skipped until the solver fix lands on main.

import (
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// laplace1D is tridiag(-1, d, -1) on n nodes.
func laplace1D(t *testing.T, n int, d float64) tridiagSystem {
	nodes, A := tridiag(t, nil, n, func(i, j int) float64 {
		if i == j {
			return d
		}
		return -1
	})
	return tridiagSystem{nodes, A}
}

// mentionsNaNOrInf reports whether err says a NaN or an infinity stopped
// the solve.
func mentionsNaNOrInf(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "NaN") || strings.Contains(err.Error(), "Inf") || strings.Contains(err.Error(), "inf"))
}

// TestProbeSolverNaN (finding 2, fix pending): a NaN residual or
// coefficient (NaN in A or b) stops CG and BiCGStab at once with an
// error value that says so. BiCGStab used to run to MaxIts and return
// no error, Converged false, "MaxIts without reaching the tolerance".
func TestProbeSolverNaN(t *testing.T) {
	const n = 8
	N := nanTridiag(t, n)
	M := laplace1D(t, n, 4)
	bv := iota32[float64](n)
	bv[2] = math.NaN()
	for _, tc := range []struct {
		name string
		sys  tridiagSystem
		b    []float64
	}{
		{"NaN in A", N, iota32[float64](n)},
		{"NaN in b", M, bv},
	} {
		for _, method := range []string{"cg", "bicgstab"} {
			for _, pc := range []string{"jacobi", "none"} {
				t.Run(tc.name+"/"+method+"/"+pc, func(t *testing.T) {
					x := must(op2.NewDat[float64](tc.sys.nodes, 1, nil, "x"))
					b := must(op2.NewDat(tc.sys.nodes, 1, tc.b, "b"))
					info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: pc, MaxIts: 200})).Solve(tc.sys.A, x, b)
					if !mentionsNaNOrInf(err) || info.Converged || info.Iterations > 2 {
						t.Fatalf("%s: %+v, %v; want an error mentioning NaN or Inf within 2 iterations", tc.name, info, err)
					}
				})
			}
		}
	}
	// A singular system (zero row and column 5, b inconsistent, no
	// preconditioner) that blows up: a NaN or infinite residual comes
	// with an error saying so.
	nodes, Z := tridiag(t, nil, n, func(i, j int) float64 {
		if i == 5 || j == 5 {
			return 0
		}
		if i == j {
			return 4
		}
		return -1
	})
	for _, method := range []string{"cg", "bicgstab"} {
		x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
		b := must(op2.NewDat(nodes, 1, iota32[float64](n), "b"))
		info, err := must(op2.NewSolver(op2.SolverOptions{Method: method, Precond: "none", MaxIts: 200})).Solve(Z, x, b)
		blown := math.IsNaN(info.Residual) || math.IsInf(info.Residual, 0)
		if info.Converged || (blown && !mentionsNaNOrInf(err)) {
			t.Errorf("%s on a singular system: %+v, %v; a NaN or infinite residual must come with an error mentioning it", method, info, err)
		}
	}
}

// TestProbeSolverNaNRHSMessage (finding 3, fix pending): CG with a NaN in
// b says the right-hand side has a NaN, not that the matrix is not
// symmetric positive definite.
func TestProbeSolverNaNRHSMessage(t *testing.T) {
	const n = 8
	M := laplace1D(t, n, 4)
	bv := iota32[float64](n)
	bv[2] = math.NaN()
	x := must(op2.NewDat[float64](M.nodes, 1, nil, "x"))
	b := must(op2.NewDat(M.nodes, 1, bv, "b"))
	info, err := must(op2.NewSolver(op2.SolverOptions{})).Solve(M.A, x, b)
	if err == nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "right-hand side") || strings.Contains(err.Error(), "positive definite") {
		t.Fatalf("CG with a NaN in b: %+v, %v; want an error saying the right-hand side has a NaN", info, err)
	}
}

// TestProbeSolverOverflowingRHS (finding 10, fix pending): b whose 2-norm
// overflows (entries 1e300): the residual is +Inf and so was the
// tolerance, and both methods reported convergence at iteration 0 with
// x = 0. Either an error that names the infinity, or a real solution.
func TestProbeSolverOverflowingRHS(t *testing.T) {
	const n = 8
	M := laplace1D(t, n, 4)
	bv := make([]float64, n)
	for i := range bv {
		bv[i] = 1e300
	}
	for _, method := range []string{"cg", "bicgstab"} {
		x := must(op2.NewDat[float64](M.nodes, 1, nil, "x"))
		b := must(op2.NewDat(M.nodes, 1, bv, "b"))
		info, err := must(op2.NewSolver(op2.SolverOptions{Method: method})).Solve(M.A, x, b)
		if err != nil {
			if !mentionsNaNOrInf(err) {
				t.Errorf("%s, ‖b‖ overflows: %v; want it to name the infinity", method, err)
			}
			continue
		}
		xs := x.DataRO()
		if !info.Converged || math.IsInf(info.Residual, 0) || math.IsNaN(info.Residual) || xs[0] == 0 || math.IsInf(xs[0], 0) {
			t.Errorf("%s, ‖b‖ overflows: %+v, x %v; want an error mentioning Inf, or the solution", method, info, xs)
		}
	}
}

// TestProbeSolverATolOnly (finding 8, fix pending): RTol 0 with ATol > 0
// is an absolute tolerance alone (RTol defaults to 1e-8 only when both
// are 0). RTol 0 used to mean "the default 1e-8", so the solve stopped
// at 1e-8 ‖b‖ (3e-4 here) and reported convergence far above ATol.
func TestProbeSolverATolOnly(t *testing.T) {
	const n, atol = 1000, 1e-6
	M := laplace1D(t, n, 2.01)
	bv := make([]float64, n)
	for i := range bv {
		bv[i] = 1000
	}
	b := must(op2.NewDat(M.nodes, 1, bv, "b"))
	bnorm := 1000 * math.Sqrt(n)
	r := must(op2.NewDat[float64](M.nodes, 1, nil, "r"))
	for _, method := range []string{"cg", "bicgstab"} {
		for _, o := range []op2.SolverOptions{{Method: method, ATol: atol}, {Method: method}} {
			x := must(op2.NewDat[float64](M.nodes, 1, nil, "x"))
			info, err := must(op2.NewSolver(o)).Solve(M.A, x, b)
			tol := atol
			if o.ATol == 0 {
				tol = 1e-8 * bnorm // both 0: the default relative tolerance
			}
			if err != nil || !info.Converged || info.Residual > tol {
				t.Errorf("%+v: %+v, %v; want convergence with a residual of at most %g", o, info, err, tol)
				continue
			}
			// The true residual b - A x agrees.
			check(t, M.A.Mult(x, r))
			var s float64
			for i, v := range r.DataRO() {
				s += (bv[i] - v) * (bv[i] - v)
			}
			if math.Sqrt(s) > 10*tol {
				t.Errorf("%+v: ‖b - A x‖ = %g for a reported residual %g", o, math.Sqrt(s), info.Residual)
			}
		}
	}
}

// TestProbeSolverZeroRHS (finding 9, fix pending): b = 0 with a nonzero
// initial guess: the solution is x = 0, returned converged at once (0
// iterations). The tolerance used to be 0 (RTol × ‖b‖), so the solvers
// iterated until the recursive residual underflowed to exactly 0 (71
// iterations for 8 unknowns, 291 for 3000).
func TestProbeSolverZeroRHS(t *testing.T) {
	for _, n := range []int{8, 3000} {
		for _, method := range []string{"cg", "bicgstab"} {
			M := laplace1D(t, n, 4)
			x := must(op2.NewDat(M.nodes, 1, iota32[float64](n), "x"))
			b := must(op2.NewDat[float64](M.nodes, 1, nil, "b"))
			info, err := must(op2.NewSolver(op2.SolverOptions{Method: method})).Solve(M.A, x, b)
			if err != nil || !info.Converged || info.Iterations != 0 || info.Residual != 0 {
				t.Errorf("%s, %d unknowns, b = 0: %+v, %v; want x = 0 converged after 0 iterations", method, n, info, err)
			}
			for i, v := range x.DataRO() {
				if v != 0 {
					t.Errorf("%s, %d unknowns, b = 0: x[%d] = %g, want 0", method, n, i, v)
					break
				}
			}
		}
	}
}
