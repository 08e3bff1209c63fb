package probe_test

// Probes of the solvers: the native solvers' handling of NaN, infinite
// and zero right-hand sides and of an absolute tolerance (findings 2, 3,
// 8, 9 and 10 of docs/history/probe-matrix-findings-2026-11-24.md), then
// issue 37's: tolerances, norms, guesses, PETSc's options and direct
// solves (docs/history/probe37-findings-2026-11-25.md).

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
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

// Issue 37, items 4-6: PETSc direct solves, InitialGuessNonzero, norms,
// PETSc started in NewSolver. These probes try tolerances (ATol alone,
// MaxIts reached), Precond "none" with every norm, b = 0 from a nonzero
// guess, NaN in x, PETSc options overriding the norm, one solver with two
// matrices, direct solves with a guess, and Close.

// needPETSc skips t when PETSc cannot be loaded here.
func needPETSc(t *testing.T) {
	t.Helper()
	s, err := op2.NewSolver(op2.SolverOptions{Package: "petsc"})
	testreq.Check(t, "petsc", err, op2.ErrPETScUnavailable)
	check(t, s.Close())
}

// solverSys is A x = b with A tridiagonal over n nodes: diagonal
// 2 + 3 (i mod 5) (so that Jacobi matters), -1 above and -1 - skew
// below the diagonal; b = A x*, x* = i mod 7 - 3.
type solverSys struct {
	nodes    *op2.Set
	A        *op2.Mat[float64]
	x, b, xs *op2.Dat[float64]
}

func solverSystem(t *testing.T, n int, skew float64) solverSys {
	t.Helper()
	nodes, A := tridiag(t, nil, n, func(i, j int) float64 {
		switch {
		case i == j:
			return 2 + 3*float64(i%5)
		case j > i:
			return -1
		}
		return -1 - skew
	})
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i%7 - 3)
	}
	s := solverSys{nodes: nodes, A: A, xs: must(op2.NewDat(nodes, 1, xs, "x*")),
		x: must(op2.NewDat[float64](nodes, 1, nil, "x")), b: must(op2.NewDat[float64](nodes, 1, nil, "b"))}
	check(t, A.Mult(s.xs, s.b))
	return s
}

// solve solves from x0 (nil: zeros) with a new solver.
func (s solverSys) solve(t *testing.T, o op2.SolverOptions, x0 []float64) (op2.SolveInfo, error) {
	t.Helper()
	check(t, s.x.Zero())
	copy(s.x.Data(), x0)
	sv, err := op2.NewSolver(o)
	if err != nil {
		return op2.SolveInfo{}, err
	}
	defer sv.Close()
	return sv.Solve(s.A, s.x, s.b)
}

// maxErr is the largest |x - x*|.
func (s solverSys) maxErr() float64 {
	var e float64
	for i, v := range s.x.DataRO() {
		e = max(e, math.Abs(v-s.xs.DataRO()[i]))
	}
	return e
}

// TestSolverTolerances: ATol alone (RTol 0), MaxIts reached, and
// Precond "none" with every norm: native and PETSc agree on the norm, on
// Converged and within two iterations.
func TestSolverTolerances(t *testing.T) {
	needPETSc(t)
	type tc struct {
		name string
		o    op2.SolverOptions
	}
	var cases []tc
	for _, pc := range []string{"jacobi", "none"} {
		for _, norm := range []op2.NormType{op2.NormDefault, op2.NormPreconditioned, op2.NormUnpreconditioned, op2.NormNatural} {
			cases = append(cases, tc{fmt.Sprintf("cg/%s/%v/atol", pc, norm), op2.SolverOptions{Method: "cg", Precond: pc, Norm: norm, ATol: 1e-7}})
			cases = append(cases, tc{fmt.Sprintf("cg/%s/%v/maxits", pc, norm), op2.SolverOptions{Method: "cg", Precond: pc, Norm: norm, MaxIts: 3, RTol: 1e-12}})
			if norm != op2.NormNatural {
				cases = append(cases, tc{fmt.Sprintf("bicgstab/%s/%v/atol", pc, norm), op2.SolverOptions{Method: "bicgstab", Precond: pc, Norm: norm, ATol: 1e-7}})
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			skew := 0.0
			if c.o.Method == "bicgstab" {
				skew = 0.4
			}
			s := solverSystem(t, 80, skew)
			native, err := s.solve(t, c.o, nil)
			check(t, err)
			po := c.o
			po.Package = "petsc"
			petsc, err := s.solve(t, po, nil)
			check(t, err)
			t.Logf("native %+v\nPETSc  %+v", native, petsc)
			if native.Norm != petsc.Norm || native.Converged != petsc.Converged {
				t.Errorf("native: norm %v, converged %v; PETSc: norm %v, converged %v", native.Norm, native.Converged, petsc.Norm, petsc.Converged)
			}
			if d := native.Iterations - petsc.Iterations; d < -2 || d > 2 {
				t.Errorf("native %d iterations, PETSc %d", native.Iterations, petsc.Iterations)
			}
			if c.o.MaxIts == 3 && (native.Iterations != 3 || native.Converged) {
				t.Errorf("MaxIts 3: native %+v", native)
			}
			if c.o.ATol > 0 && (!native.Converged || native.Residual > c.o.ATol) {
				t.Errorf("ATol %g alone: native %+v", c.o.ATol, native)
			}
		})
	}
}

// TestSolverGuesses: b = 0 from a nonzero guess gives x = 0 (native
// and PETSc); x holding NaN without InitialGuessNonzero is ignored, also
// by PETSc's direct solve and with Precond "none"; a direct solve with
// InitialGuessNonzero is an error, not a crash.
func TestSolverGuesses(t *testing.T) {
	needPETSc(t)
	nan := make([]float64, 40)
	for i := range nan {
		nan[i] = math.NaN()
	}
	ones := make([]float64, 40)
	for i := range ones {
		ones[i] = 1
	}
	for _, o := range []op2.SolverOptions{
		{Method: "cg"},
		{Method: "bicgstab", Precond: "none", Norm: op2.NormUnpreconditioned},
		{Package: "petsc", Method: "cg"},
		{Package: "petsc", Method: "preonly", Precond: "lu"},
		{Package: "petsc", Method: "preonly", Precond: "cholesky"},
	} {
		t.Run(fmt.Sprintf("%s/%s/%s", o.Package, o.Method, o.Precond), func(t *testing.T) {
			s := solverSystem(t, 40, 0)
			info, err := s.solve(t, o, nan)
			check(t, err)
			if e := s.maxErr(); e > 1e-6 || !info.Converged {
				t.Errorf("from x = NaN without a guess: max error %g, %+v", e, info)
			}
			// b = 0, from x = 1 with InitialGuessNonzero (not for
			// preonly, which refuses a guess).
			if o.Method == "preonly" {
				g := o
				g.InitialGuessNonzero = true
				if _, err := s.solve(t, g, ones); err == nil {
					t.Errorf("direct solve with InitialGuessNonzero: no error")
				} else {
					t.Logf("direct solve with a guess: %v", err)
				}
				return
			}
			check(t, s.b.Zero())
			g := o
			g.InitialGuessNonzero = true
			info, err = s.solve(t, g, ones)
			check(t, err)
			var big float64
			for _, v := range s.x.DataRO() {
				big = max(big, math.Abs(v))
			}
			if big > 1e-6 {
				t.Errorf("b = 0 from x = 1: max |x| = %g (%+v)", big, info)
			}
		})
	}
}

// TestSolverPETScOptionsNorm: -ksp_norm_type in PETScOptions
// overrides Norm, and SolveInfo.Norm says which norm ran.
func TestSolverPETScOptionsNorm(t *testing.T) {
	needPETSc(t)
	s := solverSystem(t, 60, 0)
	for _, c := range []struct {
		opts string
		norm op2.NormType
		want op2.NormType
	}{
		{"-ksp_norm_type unpreconditioned", op2.NormDefault, op2.NormUnpreconditioned},
		{"-ksp_norm_type natural", op2.NormPreconditioned, op2.NormNatural},
		{"-ksp_norm_type preconditioned", op2.NormUnpreconditioned, op2.NormPreconditioned},
	} {
		info, err := s.solve(t, op2.SolverOptions{Package: "petsc", Norm: c.norm, PETScOptions: c.opts}, nil)
		check(t, err)
		if info.Norm != c.want || !info.Converged || s.maxErr() > 1e-5 {
			t.Errorf("%q with Norm %v: %+v, max error %g; want the %v norm", c.opts, c.norm, info, s.maxErr(), c.want)
		}
	}
}

// TestSolverTwoMatrices: one solver (native, PETSc iterative and
// direct) solving with two matrices in turn, twice each: each solve is
// right, PETSc's Setup is nonzero exactly for each matrix's first solve.
func TestSolverTwoMatrices(t *testing.T) {
	needPETSc(t)
	for _, o := range []op2.SolverOptions{{}, {Package: "petsc"}, {Package: "petsc", Method: "preonly", Precond: "lu"}} {
		t.Run(o.Package+"/"+o.Method, func(t *testing.T) {
			s1 := solverSystem(t, 30, 0)
			s2 := solverSystem(t, 50, 0)
			sv := must(op2.NewSolver(o))
			for round := range 2 {
				for i, s := range []solverSys{s1, s2, s1} {
					check(t, s.x.Zero())
					info, err := sv.Solve(s.A, s.x, s.b)
					check(t, err)
					if e := s.maxErr(); e > 1e-6 {
						t.Errorf("round %d, solve %d: max error %g (%+v)", round, i, e, info)
					}
					first := round == 0 && i < 2
					if o.Package == "petsc" && (info.Setup > 0) != first {
						t.Errorf("round %d, solve %d: Setup %v", round, i, info.Setup)
					}
				}
			}
			check(t, sv.Close())
		})
	}
}

// TestSolverEmptyPETSc: a PETSc solve of a system with no rows
// (an empty set) returns at once, as the native solve does.
func TestSolverEmptyPETSc(t *testing.T) {
	needPETSc(t)
	empty := must(op2.NewSet(0, "empty"))
	m := must(op2.NewMap(empty, empty, 2, nil, "m"))
	sp := must(op2.NewSparsity(empty, 1, empty, 1, []op2.MapPair{{Row: m, Col: m}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	x := must(op2.NewDat[float64](empty, 1, nil, "x"))
	b := must(op2.NewDat[float64](empty, 1, nil, "b"))
	for _, o := range []op2.SolverOptions{{}, {Package: "petsc"}, {Package: "petsc", Method: "preonly", Precond: "lu"}} {
		sv := must(op2.NewSolver(o))
		info, err := sv.Solve(A, x, b)
		if err != nil {
			t.Errorf("%s/%s: %v", o.Package, o.Method, err)
		}
		t.Logf("%s/%s: %+v", o.Package, o.Method, info)
		check(t, sv.Close())
	}
}

// TestSolverCloseThenSolve: Solve after Close (which the docs
// forbid) returns an error or solves correctly; it does not crash. The
// probe logs which.
func TestSolverCloseThenSolve(t *testing.T) {
	needPETSc(t)
	s := solverSystem(t, 20, 0)
	for _, o := range []op2.SolverOptions{{}, {Package: "petsc"}} {
		sv := must(op2.NewSolver(o))
		_, err := sv.Solve(s.A, s.x, s.b)
		check(t, err)
		check(t, sv.Close())
		check(t, s.x.Zero())
		info, err := sv.Solve(s.A, s.x, s.b)
		t.Logf("%s: Solve after Close: %+v, %v", o.Package, info, err)
		if err == nil && s.maxErr() > 1e-6 {
			t.Errorf("%s: Solve after Close took no error but x is wrong by %g", o.Package, s.maxErr())
		}
		check(t, sv.Close())
		check(t, sv.Close())
	}
}

// TestSolverDeviceRuntime: the native solvers' vector loops on an
// opencl runtime in the soa layout (NormNatural, InitialGuessNonzero)
// give the sequential runtime's solution.
func TestSolverDeviceRuntime(t *testing.T) {
	needOpenCL(t)
	r := must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceLayout: "soa", CacheDir: cacheDir}))
	s := solverSystem(t, 50, 0)
	x0 := make([]float64, 50)
	for i := range x0 {
		x0[i] = 5
	}
	info, err := s.solve(t, op2.SolverOptions{Runtime: r, Norm: op2.NormNatural, InitialGuessNonzero: true, RTol: 1e-12}, x0)
	check(t, err)
	if !info.Converged || s.maxErr() > 1e-8 {
		t.Errorf("opencl soa: %+v, max error %g", info, s.maxErr())
	}
}
