package op2_test

import (
	"errors"
	"testing"

	"github.com/goop2/op2"
)

// largeConstDim is the dim of the constant of TestLargeConstants: 2 MiB
// of doubles, more than the constant memory of any device (PoCL's 1 MiB,
// CUDA's 64 KiB).
const largeConstDim = 1 << 18

// largeConstAt is the index of the table the kernels of
// TestLargeConstants read for element e and pass p: indices spread over
// the whole table.
func largeConstAt(e, p int) int { return (e*7919 + p*104729) % largeConstDim }

// TestLargeConstants: a program whose constants take more than the
// device's constant memory runs unchanged on every backend (the device
// backends keep such constants in read-only device memory), in a direct
// loop and in an indirect one whose helper function reads the table, and a
// new value of the constant set between loops reaches every backend. On
// opencl a kernel that casts the table's const away to write it does not
// build, as with constants in constant memory.
func TestLargeConstants(t *testing.T) {
	vals := make([]float64, largeConstDim)
	for i := range vals {
		vals[i] = float64(i%1000) + 0.25
	}
	tab := must(op2.NewConst(largeConstDim, vals, "lc_tab"))
	defer tab.Remove()
	scale := must(op2.NewConst(1, []float64{2}, "lc_scale"))
	defer scale.Remove()
	direct := op2.NewKernel(`void lc_direct(double *y, const int *e)
{
  *y = lc_scale * lc_tab[(*e * 7919) % 262144] + lc_tab[(*e * 7919 + 104729) % 262144];
}`, "lc_direct")
	indirect := op2.NewKernel(`static double lc_look(int i) { return lc_tab[i % 262144]; }
void lc_indirect(double *n, const int *e)
{
  *n += lc_scale * lc_look(*e * 7919) + lc_look(*e * 7919 + 104729);
}`, "lc_indirect")
	// want is an element's value of the direct loop, and the sum the
	// indirect loop adds to a node, for the constants' current values.
	want := func(e int) float64 {
		return scale.Value()[0]*vals[largeConstAt(e, 0)] + vals[largeConstAt(e, 1)]
	}
	onEachBackend(t, func(t *testing.T) {
		edges, nodes, pedge := scatteredEdges(3000, 700, 13, 5)
		y := must(op2.NewDat[float64](edges, 1, nil, "y"))
		n := must(op2.NewDat[float64](nodes, 1, nil, "n"))
		table := pedge.Values()
		for pass, change := range []func(){
			func() {},
			func() { // a new value of the table and of the scalar
				for i := range vals {
					vals[i] = float64(largeConstDim-i) * 0.5
				}
				check(t, tab.Set(vals...))
				check(t, scale.Set(-3))
			},
		} {
			change()
			check(t, op2.ParLoop(direct, edges, y.Arg(op2.Write), op2.ArgIdx()))
			for e, got := range y.DataRO() {
				if w := want(e); got != w {
					t.Fatalf("pass %d: direct loop: y[%d] = %v, want %v", pass, e, got, w)
				}
			}
			clear(n.Data())
			check(t, op2.ParLoop(indirect, edges, n.ArgMap(op2.Inc, pedge, 1), op2.ArgIdx()))
			sums := make([]float64, nodes.Size())
			for e := range edges.Size() {
				sums[table[2*e+1]] += want(e)
			}
			for i, got := range n.DataRO() {
				if d := got - sums[i]; d > 1e-9*max(1, sums[i]) || d < -1e-9*max(1, sums[i]) {
					t.Fatalf("pass %d: indirect loop: n[%d] = %v, want %v", pass, i, got, sums[i])
				}
			}
		}
		if op2.Backend() == "opencl" {
			// As in constant memory, the table cannot be written: casting
			// its address space away is a build error.
			writer := op2.NewKernel(`void lc_writer(double *y) { *y = lc_tab[7]; ((double *)lc_tab)[7] = -1; }`, "lc_writer")
			var be *op2.DeviceBuildError
			if err := op2.ParLoop(writer, edges, y.Arg(op2.Write)); !errors.As(err, &be) {
				t.Errorf("a kernel writing to the table: error %v, want a *DeviceBuildError", err)
			}
		}
	})
}
