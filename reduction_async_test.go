package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// TestReductionsReadLater: on every backend (the device ones copy a
// loop's partial results without waiting and fold them when the Global is
// needed), a Global reduced by a loop holds its result when the host reads
// it after later loops, when a later loop reads it, when the same
// program reduces into another Global meanwhile, and after SetValue;
// minima and maxima too.
func TestReductionsReadLater(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		const n = 1000
		set := must(op2.NewSet(n, "s"))
		xv := make([]float64, n)
		for i := range xv {
			xv[i] = float64(i%17) + 0.5
		}
		x := must(op2.NewDat(set, 1, xv, "x"))
		y := must(op2.NewDat[float64](set, 1, nil, "y"))
		sum := op2.NewKernel("void rl_sum(const double *x, double *s) { *s += *x; }", "rl_sum")
		span := op2.NewKernel("void rl_span(const double *x, double *lo, double *hi) { if (*x < *lo) *lo = *x; if (*x > *hi) *hi = *x; }", "rl_span")
		scale := op2.NewKernel("void rl_scale(const double *x, const double *s, double *y) { *y = *x * *s; }", "rl_scale")
		want := 0.0
		for _, v := range xv {
			want += v
		}
		a := must(op2.NewGlobal(1, []float64{1}, "a"))
		b := must(op2.NewGlobal(1, []float64{2}, "b"))
		lo := must(op2.NewGlobal(1, []float64{100}, "lo"))
		hi := must(op2.NewGlobal(1, []float64{-100}, "hi"))
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), a.Arg(op2.Inc)))
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), b.Arg(op2.Inc))) // the same program, another Global
		check(t, op2.ParLoop(span, set, x.Arg(op2.Read), lo.Arg(op2.Min), hi.Arg(op2.Max)))
		check(t, op2.ParLoop(scale, set, x.Arg(op2.Read), a.Arg(op2.Read), y.Arg(op2.Write))) // a later loop reads a
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), a.Arg(op2.Inc)))                      // and a is reduced into again
		if got := y.DataRO()[3]; got != xv[3]*(1+want) {
			t.Errorf("a loop reading the reduced Global saw %v, want %v", got/xv[3], 1+want)
		}
		if got := a.Value(); got != 1+2*want {
			t.Errorf("a = %v, want %v", got, 1+2*want)
		}
		if got := b.Value(); got != 2+want {
			t.Errorf("b = %v, want %v", got, 2+want)
		}
		if lo.Value() != 0.5 || hi.Value() != 16.5 {
			t.Errorf("min, max = %v, %v, want 0.5, 16.5", lo.Value(), hi.Value())
		}
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), b.Arg(op2.Inc)))
		b.SetValue(7) // replaces the pending result
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), b.Arg(op2.Inc)))
		check(t, op2.ParLoop(sum, set, x.Arg(op2.Read), b.Arg(op2.Inc)))
		if got := b.Value(); got != 7+2*want {
			t.Errorf("b after SetValue and two more loops = %v, want %v", got, 7+2*want)
		}
	})
}
