package backendtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// testComposedMap runs loops and assembles a matrix through a composed
// map (op2.NewComposedMap: cells to faces, then faces to nodes) and
// through the same table declared with op2.NewMap, on the backend under
// test: the composed map's values must be the composition, and every
// result the same bits (small integers, exact in any order).
func testComposedMap(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 5))
	const nCells, nFaces, nNodes = 700, 400, 300
	cells := must(op2.NewSet(nCells, "cells"))
	faces := must(op2.NewSet(nFaces, "faces"))
	nodes := must(op2.NewSet(nNodes, "nodes"))
	table := func(n, arity, to int) []int32 {
		tab := make([]int32, n*arity)
		for i := range tab {
			tab[i] = int32(r.IntN(to))
		}
		return tab
	}
	c2fTab, f2nTab := table(nCells, 2, nFaces), table(nFaces, 3, nNodes)
	c2f := must(op2.NewMap(cells, faces, 2, c2fTab, "c2f"))
	f2n := must(op2.NewMap(faces, nodes, 3, f2nTab, "f2n"))
	composed := must(op2.NewComposedMap("c2n", f2n, c2f))
	var want []int32
	for _, f := range c2fTab {
		want = append(want, f2nTab[3*f:3*f+3]...)
	}
	explicit := must(op2.NewMap(cells, nodes, 6, want, "c2n explicit"))
	if got := composed.Values(); composed.Arity() != 6 || composed.From() != cells || composed.To() != nodes || !slices.Equal(got, want) {
		t.Fatalf("composed map: arity %d from %v to %v, values differ from the composition", composed.Arity(), composed.From(), composed.To())
	}
	x := must(op2.NewDat(nodes, 1, iota32[float64](nNodes), "x"))
	inc := op2.NewKernel(`void inc(const int *e, const double *x0, double **acc, double *y) {
  for (int j = 0; j < 6; j++) *acc[j] += (*e % 5 + 1) * (j + 1);
  *y = *x0 * 2;
}`, "inc")
	results := map[string][2][]float64{}
	for _, m := range []*op2.Map{composed, explicit} {
		acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
		y := must(op2.NewDat[float64](cells, 1, nil, "y"))
		check(t, op2.ParLoop(inc, cells, op2.ArgIdx(), x.ArgMap(op2.Read, m, 4), acc.ArgVec(op2.Inc, m), y.Arg(op2.Write)))
		results[m.Name()] = [2][]float64{acc.DataRO(), y.DataRO()}
	}
	if c, e := results["c2n"], results["c2n explicit"]; !slices.Equal(c[0], e[0]) || !slices.Equal(c[1], e[1]) {
		t.Errorf("loops through the composed map and the explicit one differ:\n%v\n%v", c, e)
	}
	// The matrix through the composed pair is the explicit pair's.
	dense := map[string][][]float64{}
	k := op2.NewKernel(elemMatSource("double", 6, 6), "elem_mat")
	for _, m := range []*op2.Map{composed, explicit} {
		sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: m, Col: m}}, fmt.Sprintf("sp %s", m.Name())))
		A := must(op2.NewMat[float64](sp, "A"))
		check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, m, m)))
		dense[m.Name()] = must(A.Dense())
	}
	if !slices.EqualFunc(dense["c2n"], dense["c2n explicit"], slices.Equal) {
		t.Errorf("the matrix assembled through the composed map differs from the explicit map's")
	}
	wantA := denseZeros(nNodes)
	addElements(wantA, want, 6, 1, 1)
	if !slices.EqualFunc(dense["c2n"], wantA, slices.Equal) {
		t.Errorf("the matrix assembled through the composed map differs from the sums made in Go")
	}
}
