package op2_test

import (
	"errors"
	"fmt"
	"math"

	op2 "github.com/goop2/op2"
)

// Solving with PETSc: a symmetric positive definite matrix assembled
// over four elements of a line of five nodes, and b = A x* for x* =
// (0, 1, 2, 3, 4). The options go to this solver's KSP alone; where
// PETSc is not installed, GoOP2's own conjugate gradients give the same
// answer.
func ExampleSolver_petsc() {
	elems, _ := op2.NewSet(4, "elems")
	nodes, _ := op2.NewSet(5, "nodes")
	pelem, _ := op2.NewMap(elems, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pelem")
	sp, _ := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pelem, Col: pelem}}, "sp")
	A, _ := op2.NewMat[float64](sp, "A")
	element := op2.NewKernel(`
void element(double *A) {
  A[0] = 1.5; A[1] = -1;
  A[2] = -1;  A[3] = 1.5;
}`, "element")
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

	s, err := op2.NewSolver(op2.SolverOptions{Package: "petsc", PETScOptions: "-ksp_type minres -pc_type none", RTol: 1e-12})
	if errors.Is(err, op2.ErrPETScUnavailable) {
		s, err = op2.NewSolver(op2.SolverOptions{RTol: 1e-12})
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if _, err := s.Solve(A, x, b); err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range x.DataRO() {
		fmt.Printf("%.6f ", math.Round(v*1e6)/1e6+0) // +0: no "-0"
	}
	fmt.Println()
	// Output:
	// 0.000000 1.000000 2.000000 3.000000 4.000000
}
