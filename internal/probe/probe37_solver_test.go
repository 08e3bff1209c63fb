package probe_test

import (
	"fmt"
	"math"
	"testing"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/testreq"
)

// Issue 37, items 4-6: PETSc direct solves, InitialGuessNonzero, norms,
// PETSc started in NewSolver. These probes try tolerances (ATol alone,
// MaxIts reached), Precond "none" with every norm, b = 0 from a nonzero
// guess, NaN in x, PETSc options overriding the norm, one solver with two
// matrices, direct solves with a guess, and Close.

// probe37NeedPETSc skips t when PETSc cannot be loaded here.
func probe37NeedPETSc(t *testing.T) {
	t.Helper()
	s, err := op2.NewSolver(op2.SolverOptions{Package: "petsc"})
	testreq.Check(t, "petsc", err, op2.ErrPETScUnavailable)
	check(t, s.Close())
}

// probe37Sys is A x = b with A tridiagonal over n nodes: diagonal
// 2 + 3 (i mod 5) (so that Jacobi matters), -1 above and -1 - skew
// below the diagonal; b = A x*, x* = i mod 7 - 3.
type probe37Sys struct {
	nodes    *op2.Set
	A        *op2.Mat[float64]
	x, b, xs *op2.Dat[float64]
}

func probe37System(t *testing.T, n int, skew float64) probe37Sys {
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
	s := probe37Sys{nodes: nodes, A: A, xs: must(op2.NewDat(nodes, 1, xs, "x*")),
		x: must(op2.NewDat[float64](nodes, 1, nil, "x")), b: must(op2.NewDat[float64](nodes, 1, nil, "b"))}
	check(t, A.Mult(s.xs, s.b))
	return s
}

// solve solves from x0 (nil: zeros) with a new solver.
func (s probe37Sys) solve(t *testing.T, o op2.SolverOptions, x0 []float64) (op2.SolveInfo, error) {
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
func (s probe37Sys) maxErr() float64 {
	var e float64
	for i, v := range s.x.DataRO() {
		e = max(e, math.Abs(v-s.xs.DataRO()[i]))
	}
	return e
}

// TestProbe37SolverTolerances: ATol alone (RTol 0), MaxIts reached, and
// Precond "none" with every norm: native and PETSc agree on the norm, on
// Converged and within two iterations.
func TestProbe37SolverTolerances(t *testing.T) {
	probe37NeedPETSc(t)
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
			s := probe37System(t, 80, skew)
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

// TestProbe37SolverGuesses: b = 0 from a nonzero guess gives x = 0 (native
// and PETSc); x holding NaN without InitialGuessNonzero is ignored, also
// by PETSc's direct solve and with Precond "none"; a direct solve with
// InitialGuessNonzero is an error, not a crash.
func TestProbe37SolverGuesses(t *testing.T) {
	probe37NeedPETSc(t)
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
			s := probe37System(t, 40, 0)
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

// TestProbe37SolverPETScOptionsNorm: -ksp_norm_type in PETScOptions
// overrides Norm, and SolveInfo.Norm says which norm ran.
func TestProbe37SolverPETScOptionsNorm(t *testing.T) {
	probe37NeedPETSc(t)
	s := probe37System(t, 60, 0)
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

// TestProbe37SolverTwoMatrices: one solver (native, PETSc iterative and
// direct) solving with two matrices in turn, twice each: each solve is
// right, PETSc's Setup is nonzero exactly for each matrix's first solve.
func TestProbe37SolverTwoMatrices(t *testing.T) {
	probe37NeedPETSc(t)
	for _, o := range []op2.SolverOptions{{}, {Package: "petsc"}, {Package: "petsc", Method: "preonly", Precond: "lu"}} {
		t.Run(o.Package+"/"+o.Method, func(t *testing.T) {
			s1 := probe37System(t, 30, 0)
			s2 := probe37System(t, 50, 0)
			sv := must(op2.NewSolver(o))
			for round := range 2 {
				for i, s := range []probe37Sys{s1, s2, s1} {
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

// TestProbe37SolverEmptyPETSc: a PETSc solve of a system with no rows
// (an empty set) returns at once, as the native solve does.
func TestProbe37SolverEmptyPETSc(t *testing.T) {
	probe37NeedPETSc(t)
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

// TestProbe37SolverCloseThenSolve: Solve after Close (which the docs
// forbid) returns an error or solves correctly; it does not crash. The
// probe logs which.
func TestProbe37SolverCloseThenSolve(t *testing.T) {
	probe37NeedPETSc(t)
	s := probe37System(t, 20, 0)
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

// TestProbe37SolverDeviceRuntime: the native solvers' vector loops on an
// opencl runtime in the soa layout (NormNatural, InitialGuessNonzero)
// give the sequential runtime's solution.
func TestProbe37SolverDeviceRuntime(t *testing.T) {
	needOpenCL(t)
	r := must(op2.NewRuntime(op2.Config{Backend: "opencl", DeviceLayout: "soa", CacheDir: cacheDir}))
	s := probe37System(t, 50, 0)
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
