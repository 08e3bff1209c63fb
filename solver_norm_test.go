package op2_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	op2 "github.com/goop2/op2"
)

// newWeightedSystem is A x = b on a random graph of nn nodes whose edges
// have weights spread over 2×decades decades: each edge adds
// w [[1, -(1-skew)], [-(1+skew), 1]], each node 0.01 on the diagonal,
// so that the diagonal, and with it the Jacobi-preconditioned norms,
// vary widely; b = A x* and x holds a starting guess far from x*.
func newWeightedSystem(t *testing.T, nn int, decades, skew float64) system {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(nn)))
	var tab []int32
	for i := 1; i < nn; i++ {
		tab = append(tab, int32(rng.IntN(i)), int32(i))
	}
	for range nn {
		if a, b := rng.IntN(nn), rng.IntN(nn); a != b {
			tab = append(tab, int32(a), int32(b))
		}
	}
	w := make([]float64, len(tab)/2)
	for i := range w {
		w[i] = math.Pow(10, decades*(2*rng.Float64()-1))
	}
	nodes := must(op2.NewSet(nn, "nodes"))
	edges := must(op2.NewSet(len(w), "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](nn), "ident"))
	wd := must(op2.NewDat(edges, 1, w, "w"))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	s := strconv.FormatFloat(skew, 'g', -1, 64)
	edge := op2.NewKernel(`
void wedge(const double *w, double *A) {
  A[0] += w[0]; A[1] -= w[0] * (1 - `+s+`);
  A[2] -= w[0] * (1 + `+s+`); A[3] += w[0];
}`, "wedge")
	node := op2.NewKernel("void wnode(double *A) { A[0] += 0.01; }", "wnode")
	assemble := func() error {
		if err := op2.ParLoop(edge, edges, wd.Arg(op2.Read), A.Arg(op2.Inc, pedge, pedge)); err != nil {
			return err
		}
		return op2.ParLoop(node, nodes, A.Arg(op2.Inc, ident, ident))
	}
	check(t, assemble())
	xs, x0 := make([]float64, nn), make([]float64, nn)
	for i := range xs {
		xs[i] = float64(rng.IntN(9)) - 4
		x0[i] = 10 * rng.Float64()
	}
	sys := system{A: A, xs: must(op2.NewDat(nodes, 1, xs, "x*")), x: must(op2.NewDat(nodes, 1, x0, "x")),
		b: must(op2.NewDat[float64](nodes, 1, nil, "b")), assemble: assemble}
	check(t, A.Mult(sys.xs, sys.b))
	return sys
}

// solveFrom solves s with opts from x0 (nil: zeros).
func (s system) solveFrom(t *testing.T, opts op2.SolverOptions, x0 []float64) ([]float64, op2.SolveInfo, error) {
	t.Helper()
	check(t, s.x.Zero())
	copy(s.x.Data(), x0)
	sv, err := op2.NewSolver(opts)
	if err != nil {
		return nil, op2.SolveInfo{}, err
	}
	defer func() { check(t, sv.Close()) }()
	info, err := sv.Solve(s.A, s.x, s.b)
	return s.x.DataRO(), info, err
}

// residualNorms returns ‖v‖, ‖D⁻¹v‖ and sqrt(|v·D⁻¹v|), D the
// diagonal of dense.
func residualNorms(dense [][]float64, v []float64) (unprec, prec, natural float64) {
	for i, vi := range v {
		z := vi / dense[i][i]
		unprec += vi * vi
		prec += z * z
		natural += vi * z
	}
	return math.Sqrt(unprec), math.Sqrt(prec), math.Sqrt(math.Abs(natural))
}

// normCase is a method, the norm asked for and the norm that must run.
type normCase struct {
	method     string
	norm, want op2.NormType
}

// skew is the asymmetry of the test system for the case's method: none
// for CG, which needs a symmetric matrix.
func (c normCase) skew() float64 {
	if c.method == "bicgstab" {
		return 0.3
	}
	return 0
}

// normCases are the norms each native method supports.
var normCases = []normCase{
	{"cg", op2.NormDefault, op2.NormPreconditioned},
	{"cg", op2.NormPreconditioned, op2.NormPreconditioned},
	{"cg", op2.NormUnpreconditioned, op2.NormUnpreconditioned},
	{"cg", op2.NormNatural, op2.NormNatural},
	{"bicgstab", op2.NormDefault, op2.NormPreconditioned},
	{"bicgstab", op2.NormPreconditioned, op2.NormPreconditioned},
	{"bicgstab", op2.NormUnpreconditioned, op2.NormUnpreconditioned},
}

// TestSolveNormResidual: the native solvers' convergence test is PETSc's
// KSPConvergedDefault in the chosen norm: the residual they report is
// b - A x in that norm (D⁻¹ the Jacobi preconditioner), at most RTol
// times the right-hand side's norm in that norm (with a zero initial
// guess that of the first residual; with a nonzero one still b's, not
// the first residual's), and SolveInfo says which norm ran.
func TestSolveNormResidual(t *testing.T) {
	for _, tc := range normCases {
		for _, guess := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v/guess=%v", tc.method, tc.norm, guess), func(t *testing.T) {
				skew := tc.skew()
				s := newWeightedSystem(t, 120, 1, skew)
				x0 := slices.Clone(s.x.DataRO())
				dense := must(s.A.Dense())
				const rtol = 1e-6
				x, info, err := s.solveFrom(t, op2.SolverOptions{Method: tc.method, Norm: tc.norm, RTol: rtol, InitialGuessNonzero: guess}, x0)
				check(t, err)
				if info.Norm != tc.want || !info.Converged {
					t.Fatalf("%+v; want converged in the %v norm", info, tc.want)
				}
				// r = b - A x, from the solution the solver left.
				ax := must(op2.NewDat[float64](s.x.Set(), 1, nil, "Ax"))
				check(t, s.A.Mult(s.x, ax))
				r := make([]float64, len(x))
				for i, bi := range s.b.DataRO() {
					r[i] = bi - ax.DataRO()[i]
				}
				got := map[op2.NormType]float64{}
				ref := map[op2.NormType]float64{}
				got[op2.NormUnpreconditioned], got[op2.NormPreconditioned], got[op2.NormNatural] = residualNorms(dense, r)
				ref[op2.NormUnpreconditioned], ref[op2.NormPreconditioned], ref[op2.NormNatural] = residualNorms(dense, s.b.DataRO())
				if math.Abs(info.Residual-got[tc.want]) > 1e-6*got[tc.want] {
					t.Errorf("reported residual %g; b - A x has %g in the %v norm", info.Residual, got[tc.want], tc.want)
				}
				if tol := rtol * ref[tc.want]; info.Residual > tol {
					t.Errorf("residual %g above RTol × the norm of b, %g", info.Residual, tol)
				}
			})
		}
	}
}

// TestSolveInitialGuess: as PETSc's KSPSetInitialGuessNonzero, a
// solver starts from zero unless InitialGuessNonzero says to start from
// x: x's values (even NaN) are then ignored; with it, a solve from the
// solution makes no iteration.
func TestSolveInitialGuess(t *testing.T) {
	for _, pkg := range []string{"native", "petsc"} {
		for _, method := range []string{"cg", "bicgstab"} {
			t.Run(pkg+"/"+method, func(t *testing.T) {
				if pkg == "petsc" {
					needPETSc(t)
				}
				s := newSystem(t, 60, 2, 2, method == "bicgstab")
				nan := make([]float64, len(s.xs.DataRO()))
				for i := range nan {
					nan[i] = math.NaN()
				}
				o := op2.SolverOptions{Package: pkg, Method: method, RTol: 1e-12}
				x, info, err := s.solveFrom(t, o, nan)
				check(t, err)
				xs := s.xs.DataRO()
				for i := range x {
					if math.Abs(x[i]-xs[i]) > 1e-8 {
						t.Fatalf("from x = NaN without InitialGuessNonzero: x[%d] = %v, want %v (%+v)", i, x[i], xs[i], info)
					}
				}
				o.InitialGuessNonzero = true
				x, info, err = s.solveFrom(t, o, xs)
				check(t, err)
				if !info.Converged || info.Iterations != 0 {
					t.Errorf("from the solution with InitialGuessNonzero: %+v, want converged without iterating", info)
				}
				for i := range x {
					if math.Abs(x[i]-xs[i]) > 1e-12 {
						t.Fatalf("from the solution: x[%d] = %v, want %v (%+v)", i, x[i], xs[i], info)
					}
				}
			})
		}
	}
}

// TestSolveNormsMatchPETSc: the native solvers and PETSc's, given the
// same options, stop within two iterations of each other on a system
// whose Jacobi-preconditioned and plain residuals differ widely, for
// every norm each method supports, from zero and from a nonzero guess,
// and report the same norm.
func TestSolveNormsMatchPETSc(t *testing.T) {
	needPETSc(t)
	for _, tc := range normCases {
		for _, guess := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v/guess=%v", tc.method, tc.norm, guess), func(t *testing.T) {
				skew := tc.skew()
				s := newWeightedSystem(t, 300, 2, skew)
				x0 := slices.Clone(s.x.DataRO())
				o := op2.SolverOptions{Method: tc.method, Norm: tc.norm, RTol: 1e-10, InitialGuessNonzero: guess}
				_, native, err := s.solveFrom(t, o, x0)
				check(t, err)
				o.Package = "petsc"
				_, petsc, err := s.solveFrom(t, o, x0)
				check(t, err)
				t.Logf("native %+v\nPETSc %+v", native, petsc)
				if !native.Converged || !petsc.Converged || native.Norm != tc.want || petsc.Norm != tc.want {
					t.Errorf("native in the %v norm, converged %v; PETSc in the %v norm, converged %v; want both converged in the %v norm",
						native.Norm, native.Converged, petsc.Norm, petsc.Converged, tc.want)
				}
				if d := native.Iterations - petsc.Iterations; d < -2 || d > 2 {
					t.Errorf("native: %d iterations, PETSc: %d", native.Iterations, petsc.Iterations)
				}
			})
		}
	}
}
