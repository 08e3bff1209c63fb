package probe_test

import (
	"slices"
	"testing"

	"github.com/goop2/op2"
)

func TestSubsetEdgeErrors(t *testing.T) {
	s := must(op2.NewSet(5, "s"))
	for _, idx := range [][]int32{{-1}, {5}, {0, 1, 2147483647}} {
		if sub, err := op2.NewSubset(s, idx); err == nil {
			t.Errorf("NewSubset(%v) accepted: %v", idx, sub.Indices())
		}
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("NewSubset(nil set) panicked: %v", r)
			}
		}()
		if _, err := op2.NewSubset(nil, []int32{0}); err == nil {
			t.Errorf("NewSubset(nil) accepted")
		}
	}()
	e := must(op2.NewSet(0, "e"))
	sub := must(op2.NewSubset(e, nil))
	x := must(op2.NewDat[float64](e, 1, nil, "x"))
	check(t, op2.ParLoop(kScale, sub, x.Arg(op2.RW)))
	other := must(op2.NewSet(5, "o"))
	y := must(op2.NewDat[float64](other, 1, nil, "y"))
	ss := must(op2.NewSubset(s, []int32{1}))
	if err := op2.ParLoop(kScale, ss, y.Arg(op2.RW)); err == nil {
		t.Errorf("dat on another set accepted for a subset loop")
	}
	// subset of a subset's set with all elements, and a Loop object reused after changing dat values
	full := must(op2.NewSubset(s, []int32{4, 3, 2, 1, 0, 0}))
	if full.Size() != 5 {
		t.Errorf("full subset size %d", full.Size())
	}
}

var kMinVec = op2.NewKernel(`void minvec(const double *w, double **a) { a[0][0] = *w; a[1][0] = *w; a[2][0] = -*w; }`, "minvec")

// MIN/MAX through a whole-map ArgVec, with Range after Zero on the device.
func TestMinArgVecAndRangeAfterZero(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		nodes := must(op2.NewSet(5, "nodes"))
		tris := must(op2.NewSet(3, "tris"))
		m := must(op2.NewMap(tris, nodes, 3, []int32{0, 1, 2, 1, 2, 3, 2, 3, 4}, "tri"))
		w := must(op2.NewDat(tris, 1, []float64{5, 1, 3}, "w"))
		lo := must(op2.NewDat(nodes, 1, []float64{10, 10, 10, 10, 10}, "lo"))
		err := op2.ParLoop(kMinVec, tris, w.Arg(op2.Read), lo.ArgVec(op2.Min, m))
		if err != nil {
			t.Logf("MIN through ArgVec refused: %v", err)
			return
		}
		// node0: 5; node1: min(5,1)=1; node2: min(-5,1,3) = -5; node3: min(-1,3)=-1; node4: -3
		if got := lo.DataRO(); !slices.Equal(got, []float64{5, 1, -5, -1, -3}) {
			t.Errorf("lo = %v", got)
		}
		check(t, op2.ParLoop(kScale, nodes, lo.Arg(op2.RW)))
		check(t, lo.Zero())
		r, err := lo.Range(2, 3)
		if err != nil || !slices.Equal(r, []float64{0, 0, 0}) {
			t.Errorf("Range after Zero: %v %v", r, err)
		}
		check(t, op2.ParLoop(kScale, nodes, lo.Arg(op2.RW)))
		r, err = lo.Range(0, 5)
		if err != nil || !slices.Equal(r, []float64{1, 1, 1, 1, 1}) {
			t.Errorf("Range after Zero+loop: %v %v", r, err)
		}
	})
}
