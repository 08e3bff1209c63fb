package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// TestDeepChainAllocatesNothing: a program recording 40 loops (two
// kernels, one incrementing through a map, on sequential) and then
// forcing them allocates nothing from the second time on: the queue's
// slots, made the first time, are reused. Check mode is named off,
// whatever OP2_CHECK says (it copies every READ argument per loop).
func TestDeepChainAllocatesNothing(t *testing.T) {
	r := must(op2.NewRuntime(op2.Config{Lazy: true}.Explicit("Check")))
	set := must(op2.NewSet(8, "cells"))
	edges, nodes, pedge := scatteredEdges(8, 5, 3, 2)
	x := must(op2.NewDat[float64](set, 1, nil, "x"))
	q := must(op2.NewDat[float64](nodes, 2, nil, "q"))
	w := must(op2.NewDat[float64](edges, 1, nil, "w"))
	k1 := op2.NewKernel("void deep_a(double *x) { *x += 1; }", "deep_a")
	k2 := op2.NewKernel("void deep_b(const double *w, double **q) { q[0][0] += *w; q[1][1] += *w; }", "deep_b")
	const depth = 40
	loops := func() {
		for range depth / 2 {
			check(t, r.ParLoop(k1, set, x.Arg(op2.RW)))
			check(t, r.ParLoop(k2, edges, w.Arg(op2.Read), q.ArgVec(op2.Inc, pedge)))
		}
		if n := op2.RecordedLoops(); n != depth {
			t.Fatalf("%d loops recorded, want %d", n, depth)
		}
		check(t, r.Wait())
	}
	loops()
	if a := testing.AllocsPerRun(10, loops); a != 0 {
		t.Errorf("%d recorded loops and Wait allocate %v times", depth, a)
	}
	if got := x.DataRO()[0]; got != (1+10+1)*depth/2 {
		t.Errorf("x[0] = %v after %d runs of %d loops, want %d", got, 12, depth/2, (1+10+1)*depth/2)
	}
}
