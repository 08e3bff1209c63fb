package probe_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

var kScale = op2.NewKernel(`void scale(double *x) { x[0] = x[0] * 2 + 1; }`, "scale")
var kSum = op2.NewKernel(`void sumx(const double *x, double *s) { *s += x[0]; }`, "sumx")

func TestRangeBounds(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		s := must(op2.NewSet(4, "s"))
		x := must(op2.NewDat(s, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7}, "x"))
		for _, c := range [][2]int{{-1, 1}, {0, 5}, {4, 1}, {3, 2}, {0, -1}, {math.MaxInt, 2}, {2, math.MaxInt}, {1, math.MaxInt - 0}} {
			if v, err := x.Range(c[0], c[1]); err == nil {
				t.Errorf("Range(%d, %d) = %v, want an error", c[0], c[1], v)
			}
		}
		v, err := x.Range(4, 0)
		if err != nil || len(v) != 0 {
			t.Errorf("Range(4, 0) = %v, %v; want empty", v, err)
		}
		check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW)))
		v, err = x.Range(1, 2)
		if err != nil || !slices.Equal(v, []float64{5, 3, 9, 5}) {
			t.Errorf("Range(1,2) after a loop = %v, %v; want [5 3 9 5]", v, err)
		}
	})
}

func TestRangeEmptySetAndUnallocated(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		s := must(op2.NewSet(0, "empty"))
		x := must(op2.NewDat[float64](s, 3, nil, "x"))
		v, err := x.Range(0, 0)
		if err != nil || len(v) != 0 {
			t.Errorf("Range(0,0) on empty: %v %v", v, err)
		}
		s2 := must(op2.NewSet(3, "s2"))
		y := must(op2.NewDat[int64](s2, 2, nil, "y"))
		v2, err := y.Range(1, 2)
		if err != nil || !slices.Equal(v2, []int64{0, 0, 0, 0}) {
			t.Errorf("Range on never-used dat: %v %v", v2, err)
		}
	})
}

// Zero after a device loop, then a loop reads it; CopyTo onto itself; CopyTo after device then host use.
func TestZeroCopyAfterLoops(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 100
		s := must(op2.NewSet(n, "s"))
		init := make([]float64, n)
		for i := range init {
			init[i] = float64(i)
		}
		x := must(op2.NewDat(s, 1, slices.Clone(init), "x"))
		y := must(op2.NewDat[float64](s, 1, nil, "y"))
		g := must(op2.NewGlobal(1, []float64{0}, "g"))
		check(t, op2.ParLoop(kScale, s, x.Arg(op2.RW))) // x = 2i+1
		check(t, x.CopyTo(x))
		check(t, x.CopyTo(y))
		check(t, x.Zero())
		check(t, op2.ParLoop(kSum, s, x.Arg(op2.Read), g.Arg(op2.Inc)))
		if g.Value() != 0 {
			t.Errorf("sum after Zero = %v, want 0", g.Value())
		}
		g.SetValue(0)
		check(t, op2.ParLoop(kSum, s, y.Arg(op2.Read), g.Arg(op2.Inc)))
		if want := float64(n * n); g.Value() != want {
			t.Errorf("sum of copy = %v, want %v", g.Value(), want)
		}
		// host write, then copy and loop.
		d := x.Data()
		for i := range d {
			d[i] = 1
		}
		check(t, x.CopyTo(y))
		g.SetValue(10)
		check(t, op2.ParLoop(kSum, s, y.Arg(op2.Read), g.Arg(op2.Inc)))
		if want := float64(10 + n); g.Value() != want {
			t.Errorf("after host write+CopyTo: %v, want %v", g.Value(), want)
		}
		// DataWO after a device loop: write all, loop must see them.
		check(t, op2.ParLoop(kScale, s, y.Arg(op2.RW)))
		wo := y.DataWO()
		for i := range wo {
			wo[i] = 2
		}
		g.SetValue(0)
		check(t, op2.ParLoop(kSum, s, y.Arg(op2.Read), g.Arg(op2.Inc)))
		if want := float64(2 * n); g.Value() != want {
			t.Errorf("after DataWO: %v, want %v", g.Value(), want)
		}
		if got := y.DataRO(); got[0] != 2 || got[n-1] != 2 {
			t.Errorf("DataRO after DataWO: %v", got[:3])
		}
		// Zero a dat never used, then loop on it.
		z := must(op2.NewDat[float64](s, 1, nil, "z"))
		check(t, z.Zero())
		g.SetValue(5)
		check(t, op2.ParLoop(kSum, s, z.Arg(op2.Read), g.Arg(op2.Inc)))
		if g.Value() != 5 {
			t.Errorf("never-used zeroed dat sum: %v", g.Value())
		}
	})
}

// CopyTo onto a dat on another set / dim, and between dats of different types of set size.
func TestCopyToErrors(t *testing.T) {
	s := must(op2.NewSet(3, "s"))
	s2 := must(op2.NewSet(3, "s2"))
	a := must(op2.NewDat(s, 1, []float64{1, 2, 3}, "a"))
	b := must(op2.NewDat(s2, 1, []float64{4, 5, 6}, "b"))
	c := must(op2.NewDat(s, 2, []float64{0, 0, 0, 0, 0, 0}, "c"))
	if err := a.CopyTo(b); err == nil || !strings.Contains(err.Error(), "a") {
		t.Errorf("other set: %v", err)
	}
	if err := a.CopyTo(c); err == nil {
		t.Errorf("other dim: nil error")
	}
	if err := a.CopyTo(nil); err == nil {
		t.Errorf("nil dst: nil error")
	}
	if !slices.Equal(b.DataRO(), []float64{4, 5, 6}) {
		t.Errorf("b changed")
	}
}

// Global Value/SetValue on dims other than 1 panic; SetValue on a device Global then reduce.
func TestGlobalValueDevice(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		s := must(op2.NewSet(10, "s"))
		x := must(op2.NewDat(s, 1, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "x"))
		g := must(op2.NewGlobal[float64](1, nil, "g"))
		for i := 0; i < 3; i++ {
			g.SetValue(float64(100 * i))
			check(t, op2.ParLoop(kSum, s, x.Arg(op2.Read), g.Arg(op2.Inc)))
			if g.Value() != float64(100*i+10) {
				t.Errorf("iter %d: %v", i, g.Value())
			}
		}
		g2 := must(op2.NewGlobal(2, []float64{1, 2}, "g2"))
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Value on dim 2 did not panic")
				}
			}()
			g2.Value()
		}()
	})
}
