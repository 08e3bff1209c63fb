package probe_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// ring: n nodes, n edges, edge e joins e and e+1 mod n.
func ring(t *testing.T, n int) (*op2.Set, *op2.Set, *op2.Map) {
	nodes := must(op2.NewSet(n, "nodes"))
	edges := must(op2.NewSet(n, "edges"))
	v := make([]int32, 2*n)
	for e := 0; e < n; e++ {
		v[2*e] = int32(e)
		v[2*e+1] = int32((e + 1) % n)
	}
	return nodes, edges, must(op2.NewMap(edges, nodes, 2, v, "pedge"))
}

var kMin = op2.NewKernel(`void pmin(const double *w, double *a, double *b) { *a = *w; *b = *w; }`, "pmin")
var kMax = op2.NewKernel(`void pmax(const double *w, double *a, double *b) { *a = *w; *b = *w; }`, "pmax")

// Subset + MIN/MAX through a map: only the subset's edges contribute.
func TestSubsetMinMax(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 10
		nodes, edges, pedge := ring(t, n)
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(100 - i)
		}
		wd := must(op2.NewDat(edges, 1, w, "w"))
		init := make([]float64, n)
		for i := range init {
			init[i] = 50
		}
		lo := must(op2.NewDat(nodes, 1, slices.Clone(init), "lo"))
		hi := must(op2.NewDat(nodes, 1, slices.Clone(init), "hi"))
		sub := must(op2.NewSubset(edges, []int32{2, 7}))
		check(t, op2.ParLoop(kMin, sub, wd.Arg(op2.Read), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1)))
		check(t, op2.ParLoop(kMax, sub, wd.Arg(op2.Read), hi.ArgMap(op2.Max, pedge, 0), hi.ArgMap(op2.Max, pedge, 1)))
		wantLo := slices.Clone(init)
		wantHi := slices.Clone(init)
		for _, e := range []int{2, 7} {
			for _, nd := range []int{e, (e + 1) % n} {
				wantLo[nd] = math.Min(wantLo[nd], w[e])
				wantHi[nd] = math.Max(wantHi[nd], w[e])
			}
		}
		if got := lo.DataRO(); !slices.Equal(got, wantLo) {
			t.Errorf("lo = %v, want %v", got, wantLo)
		}
		if got := hi.DataRO(); !slices.Equal(got, wantHi) {
			t.Errorf("hi = %v, want %v", got, wantHi)
		}
	})
}

var kRed = op2.NewKernel(`
void red(const int *i, const double *w, double *s, double *mn, double *mx, int *c) {
  *s += *w; if (*w < *mn) *mn = *w; if (*w > *mx) *mx = *w; *c += *i;
}`, "red")

// Subset + Global reductions, empty subset, full subset.
func TestSubsetReductions(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 1000
		_, edges, _ := ring(t, n)
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(i%37) - 10
		}
		wd := must(op2.NewDat(edges, 1, w, "w"))
		for _, tc := range []struct {
			name string
			idx  []int32
		}{
			{"empty", []int32{}},
			{"one", []int32{999}},
			{"some", []int32{5, 3, 3, 700, 0, 999, 512}},
			{"full", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				idx := tc.idx
				if idx == nil {
					for i := n - 1; i >= 0; i-- {
						idx = append(idx, int32(i))
					}
				}
				sub, err := op2.NewSubset(edges, idx)
				check(t, err)
				s := must(op2.NewGlobal(1, []float64{1}, "s"))
				mn := must(op2.NewGlobal(1, []float64{1e9}, "mn"))
				mx := must(op2.NewGlobal(1, []float64{-1e9}, "mx"))
				c := must(op2.NewGlobal(1, []int32{0}, "c"))
				check(t, op2.ParLoop(kRed, sub, op2.ArgIdx(), wd.Arg(op2.Read), s.Arg(op2.Inc), mn.Arg(op2.Min), mx.Arg(op2.Max), c.Arg(op2.Inc)))
				ws, wmn, wmx, wc := 1.0, 1e9, -1e9, int32(0)
				for _, e := range sub.Indices() {
					ws += w[e]
					wmn = math.Min(wmn, w[e])
					wmx = math.Max(wmx, w[e])
					wc += e
				}
				if s.Value() != ws || mn.Value() != wmn || mx.Value() != wmx || c.Value() != wc {
					t.Errorf("got s=%v mn=%v mx=%v c=%v; want %v %v %v %v", s.Value(), mn.Value(), mx.Value(), c.Value(), ws, wmn, wmx, wc)
				}
			})
		}
	})
}

var kIncIdx = op2.NewKernel(`
void incidx(const int *e, const int *n0, const int *n1, int *a, int *b, int *own) {
  *a += 1; *b += 1; *own = *e * 1000 + *n0 * 10 + (*n1 % 10);
}`, "incidx")

// Subset + indirect increments + ArgIdx/m.ArgIdx: index must be the element's number in the set.
func TestSubsetIncAndIdx(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 300
		nodes, edges, pedge := ring(t, n)
		cnt := must(op2.NewDat[int32](nodes, 1, nil, "cnt"))
		own := must(op2.NewDat(edges, 1, make([]int32, n), "own"))
		idx := []int32{}
		for i := 0; i < n; i += 3 {
			idx = append(idx, int32(i))
		}
		sub := must(op2.NewSubset(edges, idx))
		check(t, op2.ParLoop(kIncIdx, sub, op2.ArgIdx(), pedge.ArgIdx(0), pedge.ArgIdx(1), cnt.ArgMap(op2.Inc, pedge, 0), cnt.ArgMap(op2.Inc, pedge, 1), own.Arg(op2.Write)))
		wantCnt := make([]int32, n)
		wantOwn := make([]int32, n)
		for _, e := range idx {
			wantCnt[e]++
			wantCnt[(int(e)+1)%n]++
			wantOwn[e] = e*1000 + e*10 + int32((int(e)+1)%n%10)
		}
		if got := cnt.DataRO(); !slices.Equal(got, wantCnt) {
			t.Errorf("cnt = %v\nwant %v", got[:12], wantCnt[:12])
		}
		if got := own.DataRO(); !slices.Equal(got, wantOwn) {
			t.Errorf("own = %v\nwant %v", got[:12], wantOwn[:12])
		}
	})
}
