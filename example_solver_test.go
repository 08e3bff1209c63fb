package op2_test

import (
	"fmt"

	op2 "github.com/goop2/op2"
)

// The norm of the residual that a solve's tolerance tests: by default,
// as in PETSc, the preconditioned residual's (with Jacobi, D⁻¹(b − A x));
// or b − A x's; or, for CG, the natural norm. A solve starts from zero
// unless InitialGuessNonzero says to start from x.
func ExampleNormType() {
	elems, _ := op2.NewSet(4, "elems")
	nodes, _ := op2.NewSet(5, "nodes")
	pelem, _ := op2.NewMap(elems, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pelem")
	sp, _ := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pelem, Col: pelem}}, "sp")
	A, _ := op2.NewMat[float64](sp, "A")
	element := op2.NewKernel("void element(double *A) { A[0] = 1.5; A[1] = -1; A[2] = -1; A[3] = 1.5; }", "element")
	if err := op2.ParLoop(element, elems, A.Arg(op2.Inc, pelem, pelem)); err != nil {
		fmt.Println(err)
		return
	}
	xstar, _ := op2.NewDat(nodes, 1, []float64{0, 1, 2, 3, 4}, "x*")
	b, _ := op2.NewDat[float64](nodes, 1, nil, "b")
	x, _ := op2.NewDat[float64](nodes, 1, nil, "x")
	if err := A.Mult(xstar, b); err != nil {
		fmt.Println(err)
		return
	}
	for _, norm := range []op2.NormType{op2.NormDefault, op2.NormUnpreconditioned, op2.NormNatural} {
		s, err := op2.NewSolver(op2.SolverOptions{Norm: norm, RTol: 1e-10})
		if err != nil {
			fmt.Println(err)
			return
		}
		info, err := s.Solve(A, x, b)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s norm: converged %v, x[3] = %.6f\n", info.Norm, info.Converged, x.DataRO()[3])
	}
	// Output:
	// preconditioned norm: converged true, x[3] = 3.000000
	// unpreconditioned norm: converged true, x[3] = 3.000000
	// natural norm: converged true, x[3] = 3.000000
}
