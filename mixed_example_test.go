package op2_test

import (
	"fmt"

	"github.com/goop2/op2"
)

// A P1 × P0 mixed space on two triangles: a value per node and one per
// cell. The loop over the cells passes the mixed dat through the mixed
// map, and the kernel gets one parameter per block.
func ExampleMixedDat() {
	nodes, _ := op2.NewSet(4, "nodes")
	cells, _ := op2.NewSet(2, "cells")
	pcell, _ := op2.NewMap(cells, nodes, 3, []int32{0, 1, 2, 1, 2, 3}, "pcell")
	self, _ := op2.NewMap(cells, cells, 1, []int32{0, 1}, "self")
	space, _ := op2.NewMixedSet([]*op2.Set{nodes, cells}, "P1×P0")
	dofs, _ := op2.NewMixedMap([]*op2.Map{pcell, self}, "dofs")
	u, _ := op2.NewMixedDat[float64](space, []int{1, 1}, nil, "u")

	// Block 0 (nodes) through pcell: double **; block 1 (cells) through
	// self: double **.
	k := op2.NewKernel(`
void count(double **p1, double **p0) {
  for (int i = 0; i < 3; i++) *p1[i] += 1;
  *p0[0] += 3;
}`, "count")
	if err := op2.ParLoop(k, cells, u.ArgVec(op2.Inc, dofs)); err != nil {
		panic(err)
	}
	fmt.Println(u.DataRO())
	// Output: [[1 2 2 1] [3 3]]
}

// A loop over a mixed set runs the kernel over each block's set in turn,
// with that block of every mixed dat passed directly.
func ExampleMixedSet() {
	nodes, _ := op2.NewSet(3, "nodes")
	cells, _ := op2.NewSet(2, "cells")
	space, _ := op2.NewMixedSet([]*op2.Set{nodes, cells}, "space")
	v, _ := op2.NewMixedDat(space, []int{1, 1}, []float64{1, 2, 3, 10, 20}, "v")
	sum, _ := op2.NewGlobal[float64](1, nil, "sum")
	k := op2.NewKernel(`void twice(double *v, double *s) { v[0] *= 2; s[0] += v[0]; }`, "twice")
	if err := op2.ParLoop(k, space, v.Arg(op2.RW), sum.Arg(op2.Inc)); err != nil {
		panic(err)
	}
	fmt.Println(v.DataRO(), sum.Value())
	// Output: [[2 4 6] [20 40]] 72
}

// A block matrix on a P1 × P0 space: the kernel gets one element matrix
// per block, (0,0), (0,1), (1,0), (1,1); Mult sums the blocks' products.
func ExampleMixedMat() {
	nodes, _ := op2.NewSet(3, "nodes")
	cells, _ := op2.NewSet(1, "cells")
	pcell, _ := op2.NewMap(cells, nodes, 3, []int32{0, 1, 2}, "pcell")
	self, _ := op2.NewMap(cells, cells, 1, []int32{0}, "self")
	space, _ := op2.NewMixedSet([]*op2.Set{nodes, cells}, "space")
	dofs, _ := op2.NewMixedMap([]*op2.Map{pcell, self}, "dofs")
	sp, _ := op2.NewMixedSparsity(space, []int{1, 1}, space, []int{1, 1}, []op2.MixedMapPair{{Row: dofs, Col: dofs}}, "sp")
	A, _ := op2.NewMixedMat[float64](sp, "A")
	k := op2.NewKernel(`
void elem(double *a00, double *a01, double *a10, double *a11) {
  for (int i = 0; i < 3; i++) { a00[i * 3 + i] = 2; a01[i] = 1; a10[i] = -1; }
  a11[0] = 5;
}`, "elem")
	if err := op2.ParLoop(k, cells, A.Arg(op2.Inc, dofs, dofs)); err != nil {
		panic(err)
	}
	x, _ := op2.NewMixedDat(space, []int{1, 1}, []float64{1, 2, 3, 1}, "x")
	y, _ := op2.NewMixedDat[float64](space, []int{1, 1}, nil, "y")
	if err := A.Mult(x, y); err != nil {
		panic(err)
	}
	fmt.Println(y.DataRO())
	// Output: [[3 5 7] [-1]]
}
