package op2_test

import (
	"fmt"

	"github.com/goop2/op2"
)

// A time step as a chain: the loops inside the scope are checked when
// issued and run, in order, when the scope returns; reading a value
// inside it (Global.Value here) runs what was recorded before the read.
func ExampleChain() {
	cells, _ := op2.NewSet(4, "cells")
	u, _ := op2.NewDat(cells, 1, []float64{1, 2, 3, 4}, "u")
	uold, _ := op2.NewDat[float64](cells, 1, nil, "uold")
	total, _ := op2.NewGlobal[float64](1, nil, "total")
	save := op2.NewKernel(`void save(const double *u, double *uold) { *uold = *u; }`, "save")
	step := op2.NewKernel(`void step(const double *uold, double *u, double *total) { *u = 2 * *uold; *total += *u; }`, "step")

	err := op2.Chain(func() error {
		if err := op2.ParLoop(save, cells, u.Arg(op2.Read), uold.Arg(op2.Write)); err != nil {
			return err
		}
		if err := op2.ParLoop(step, cells, uold.Arg(op2.Read), u.Arg(op2.Write), total.Arg(op2.Inc)); err != nil {
			return err
		}
		fmt.Println("total inside the chain:", total.Value()) // runs both loops
		return op2.ParLoop(step, cells, uold.Arg(op2.Read), u.Arg(op2.Write), total.Arg(op2.Inc))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("u:", u.Data(), "total:", total.Value())
	// Output:
	// total inside the chain: 20
	// u: [2 4 6 8] total: 40
}
