package probe_test

import (
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// A disabled optional argument must not change the dat's state: values stay as they were.
func TestOptDisabledKeepsValues(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		nodes, edges, pedge := ring(t, 8)
		w := must(op2.NewDat(edges, 1, slices.Repeat([]float64{1}, 8), "w"))
		x := must(op2.NewDat(edges, 1, []float64{1, 2, 3, 4, 5, 6, 7, 8}, "x"))
		a := must(op2.NewDat(nodes, 1, []float64{10, 20, 30, 40, 50, 60, 70, 80}, "a"))
		lo := must(op2.NewDat(nodes, 1, []float64{10, 20, 30, 40, 50, 60, 70, 80}, "lo"))
		g := must(op2.NewGlobal(1, []float64{5}, "g"))
		gm := must(op2.NewGlobal(1, []float64{5}, "gm"))
		k := op2.NewKernel(`
void optall(const double *w, double *x, double *a0, double *a1, double *l0, double *l1, double *g, double *gm) {
  if (x) *x = 99; if (a0) { *a0 += 1; *a1 += 1; } if (l0) { *l0 = -1; *l1 = -1; } if (g) *g += 1; if (gm) *gm = 0;
}`, "optall")
		// first enabled once so device copies exist, then disabled twice with host changes in between
		check(t, op2.ParLoop(k, edges, w.Arg(op2.Read), op2.Opt(true, x.Arg(op2.Write)), op2.Opt(true, a.ArgMap(op2.Inc, pedge, 0)), op2.Opt(true, a.ArgMap(op2.Inc, pedge, 1)),
			op2.Opt(true, lo.ArgMap(op2.Min, pedge, 0)), op2.Opt(true, lo.ArgMap(op2.Min, pedge, 1)), op2.Opt(true, g.Arg(op2.Inc)), op2.Opt(true, gm.Arg(op2.Min))))
		copy(x.Data(), []float64{1, 2, 3, 4, 5, 6, 7, 8})
		copy(a.Data(), []float64{10, 20, 30, 40, 50, 60, 70, 80})
		copy(lo.Data(), []float64{10, 20, 30, 40, 50, 60, 70, 80})
		g.SetValue(5)
		gm.SetValue(5)
		for i := 0; i < 2; i++ {
			check(t, op2.ParLoop(k, edges, w.Arg(op2.Read), op2.Opt(false, x.Arg(op2.Write)), op2.Opt(false, a.ArgMap(op2.Inc, pedge, 0)), op2.Opt(false, a.ArgMap(op2.Inc, pedge, 1)),
				op2.Opt(false, lo.ArgMap(op2.Min, pedge, 0)), op2.Opt(false, lo.ArgMap(op2.Min, pedge, 1)), op2.Opt(false, g.Arg(op2.Inc)), op2.Opt(false, gm.Arg(op2.Min))))
		}
		if got := x.DataRO(); !slices.Equal(got, []float64{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Errorf("x after disabled Write: %v", got)
		}
		if got := a.DataRO(); !slices.Equal(got, []float64{10, 20, 30, 40, 50, 60, 70, 80}) {
			t.Errorf("a after disabled Inc: %v", got)
		}
		if got := lo.DataRO(); !slices.Equal(got, []float64{10, 20, 30, 40, 50, 60, 70, 80}) {
			t.Errorf("lo after disabled Min: %v", got)
		}
		if g.Value() != 5 || gm.Value() != 5 {
			t.Errorf("globals after disabled: %v %v", g.Value(), gm.Value())
		}
		// And a never-used dat passed disabled stays unallocated/zero and usable afterwards.
		y := must(op2.NewDat[float64](edges, 1, nil, "y"))
		ky := op2.NewKernel(`void opty(double *y) { if (y) *y = 3; }`, "opty")
		check(t, op2.ParLoop(ky, edges, op2.Opt(false, y.Arg(op2.Write))))
		if got := y.DataRO(); !slices.Equal(got, make([]float64, 8)) {
			t.Errorf("never-used y after disabled Write: %v", got)
		}
		check(t, op2.ParLoop(ky, edges, op2.Opt(true, y.Arg(op2.Write))))
		if got := y.DataRO(); got[0] != 3 || got[7] != 3 {
			t.Errorf("y after enabled Write: %v", got)
		}
	})
}
