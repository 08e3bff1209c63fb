package probe_test

import (
	"math"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// RCBCentreOrdering: finite coordinates whose centres overflow, a map
// from a set to itself, empty sets; results match the plain numbering.
func TestProbeRCBCentreEdgeCases(t *testing.T) {
	use(t, bk{"sequential", "sequential", ""})
	k := op2.NewKernel(`void rcbc(const double *x0, const double *x1, double *a, double *b) {
  a[0] += x1[0]; a[1] += x1[1]; b[0] += x0[0]; b[1] += x0[1]; }`, "rcbc")
	for _, tc := range []struct {
		name  string
		scale float64
		self  bool
		n     int
	}{
		{"plain", 1, false, 50},
		{"huge coordinates", 1.5e308, false, 50},
		{"self map", 1, true, 50},
		{"empty", 1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			nodes := must(op2.NewSet(n, "nodes"))
			src := nodes
			if !tc.self {
				src = must(op2.NewSet(n, "edges"))
			}
			tab := make([]int32, 2*n)
			xv := make([]float64, 2*n)
			for i := 0; i < n; i++ {
				tab[2*i], tab[2*i+1] = int32(i*7%n), int32((i*7+1)%n)
				xv[2*i], xv[2*i+1] = tc.scale*math.Cos(float64(i*7%n)), tc.scale*math.Sin(float64(i*3))
			}
			m := must(op2.NewMap(src, nodes, 2, tab, "m"))
			x := must(op2.NewDat(nodes, 2, xv, "x"))
			acc := must(op2.NewDat[float64](nodes, 2, nil, "acc"))
			if _, err := op2.Renumber(op2.RCBCentreOrdering(x, m)); err != nil {
				t.Fatalf("Renumber: %v", err)
			}
			check(t, op2.ParLoop(k, src, x.ArgMap(op2.Read, m, 0), x.ArgMap(op2.Read, m, 1), acc.ArgMap(op2.Inc, m, 0), acc.ArgMap(op2.Inc, m, 1)))
			want := make([]float64, 2*n)
			for e := 0; e < n; e++ {
				a, b := tab[2*e], tab[2*e+1]
				for d := range 2 {
					want[2*int(a)+d] += xv[2*int(b)+d]
					want[2*int(b)+d] += xv[2*int(a)+d]
				}
			}
			got := must(acc.Gather())
			if i := closeTo(got, want, 1e-12); i >= 0 {
				t.Errorf("after RCBCentreOrdering: element %d got %v want %v", i, got[i], want[i])
			}
		})
	}
}

// RCBCentreOrdering refuses a NaN coordinate, saying that the elements
// meant are the map's source elements, whose centres were bisected.
func TestProbeRCBCentreNaN(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	cells := must(op2.NewSet(2, "cells"))
	m := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 2, 3}, "pcell"))
	x := must(op2.NewDat(nodes, 1, []float64{0, 1, 2, math.NaN()}, "x"))
	_, err := op2.Renumber(op2.RCBCentreOrdering(x, m))
	if err == nil || !strings.Contains(err.Error(), "RCBCentreOrdering") || !strings.Contains(err.Error(), `"cells"`) || !strings.Contains(err.Error(), "element 1 ") {
		t.Errorf("NaN coordinate: %v", err)
	}
}
