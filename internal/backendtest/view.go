package backendtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

func init() {
	conformance = append(conformance, struct {
		name string
		test func(t *testing.T)
	}{"DatViews", testDatViews})
}

// testDatViews: views of single components of Dats of dim 3 and 2
// (DatView) passed directly, through a map column and through a whole
// map, read, written, incremented and maximised, two components of one
// Dat in one loop (one read and one modified, or one maximised and one
// written), give the values computed here, and leave the other
// components alone.
func testDatViews(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	const nEdges, nNodes = 1500, 400
	edges, nodes, table, m := edgeMesh(r, nEdges, nNodes)
	q0 := make([]float64, 3*nNodes)
	for i := range q0 {
		q0[i] = float64(r.IntN(64)) / 4
	}
	q := must(op2.NewDat(nodes, 3, q0, "q"))
	v0, v1, v2 := must(q.View(0)), must(q.View(1)), must(q.View(2))
	want := append([]float64(nil), q0...)

	// Direct WRITE of component 1 alone, the values on the host: the
	// other components must reach the device unchanged.
	init := op2.NewKernel("void vw_init(const int *i, double *b) { *b = 0.25 * *i; }", "vw_init")
	check(t, op2.ParLoop(init, nodes, op2.ArgIdx(), v1.Arg(op2.Write)))
	for n := 0; n < nNodes; n++ {
		want[3*n+1] = 0.25 * float64(n)
	}
	// Direct: component 1 from component 0, which is only read.
	scale := op2.NewKernel("void vw_scale(const double *a, double *b) { *b = 2 * *b + *a; }", "vw_scale")
	check(t, op2.ParLoop(scale, nodes, v0.Arg(op2.Read), v1.Arg(op2.RW)))
	for n := 0; n < nNodes; n++ {
		want[3*n+1] = 2*want[3*n+1] + want[3*n]
	}
	// Through the map: component 2 incremented through both columns
	// from component 0 read through the whole map.
	flux := op2.NewKernel("void vw_flux(const double **a, double *r0, double *r1) { *r0 += a[1][0]; *r1 -= 0.5 * a[0][0]; }", "vw_flux")
	check(t, op2.ParLoop(flux, edges, v0.ArgVec(op2.Read, m), v2.ArgMap(op2.Inc, m, 0), v2.ArgMap(op2.Inc, m, 1)))
	for e := 0; e < nEdges; e++ {
		a, b := int(table[2*e]), int(table[2*e+1])
		want[3*a+2] += want[3*b]
		want[3*b+2] -= 0.5 * want[3*a]
	}
	if got := q.Data(); !slices.Equal(got, want) {
		t.Fatalf("float64 views: %s", firstDiff(got, want, 3))
	}

	// int32, dim 2: the largest edge number at each node into component
	// 1 (MAX through the whole map).
	p0 := make([]int32, 2*nNodes)
	for i := range p0 {
		p0[i] = -int32(i)
	}
	p := must(op2.NewDat(nodes, 2, p0, "p"))
	u0, u1 := must(p.View(0)), must(p.View(1))
	// Component 0 of the edges' ends written through column 0 in the same
	// loop (a value that does not depend on the edge).
	hi := op2.NewKernel("void vw_hi(const int *e, int **h, int *o, const int *n) { if (*e > *h[0]) *h[0] = *e; if (*e > *h[1]) *h[1] = *e; *o = 3 * *n; }", "vw_hi")
	check(t, op2.ParLoop(hi, edges, op2.ArgIdx(), u1.ArgVec(op2.Max, m), u0.ArgMap(op2.Write, m, 0), m.ArgIdx(0)))
	wantP := append([]int32(nil), p0...)
	for e := 0; e < nEdges; e++ {
		for _, n := range table[2*e : 2*e+2] {
			wantP[2*n+1] = max(wantP[2*n+1], int32(e))
		}
		wantP[2*table[2*e]] = 3 * table[2*e]
	}
	if got := p.Data(); !slices.Equal(got, wantP) {
		t.Fatalf("int32 views: %s", firstDiff(got, wantP, 2))
	}
}

// firstDiff describes the first value where got and want (dim values
// per element) differ.
func firstDiff[T comparable](got, want []T, dim int) string {
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("element %d, component %d = %v, want %v", i/dim, i%dim, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d values, want %d", len(got), len(want))
}
