package probe_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

var kOptVec = op2.NewKernel(`
void optvec(const double **x, double **acc, double *g) {
  double s = x[0][0] + x[1][0] + x[2][0];
  if (acc) { acc[0][0] += s; acc[1][0] += s; acc[2][0] += s; }
  if (g) *g += s;
}`, "optvec")

// Opt + ArgVec toggled between calls of the same loop, with an optional Global.
func TestOptArgVecToggle(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		nodes := must(op2.NewSet(5, "nodes"))
		tris := must(op2.NewSet(3, "tris"))
		m := must(op2.NewMap(tris, nodes, 3, []int32{0, 1, 2, 1, 2, 3, 2, 3, 4}, "tri"))
		x := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4, 5}, "x"))
		acc := must(op2.NewDat(nodes, 1, make([]float64, 5), "acc"))
		g := must(op2.NewGlobal(1, []float64{0}, "g"))
		sums := []float64{6, 9, 12}
		wantAcc := make([]float64, 5)
		wantG := 0.0
		for i, pat := range [][2]bool{{false, true}, {true, false}, {true, true}, {false, false}, {true, true}} {
			check(t, op2.ParLoop(kOptVec, tris, x.ArgVec(op2.Read, m), op2.Opt(pat[0], acc.ArgVec(op2.Inc, m)), op2.Opt(pat[1], g.Arg(op2.Inc))))
			for e := 0; e < 3; e++ {
				if pat[0] {
					for j := 0; j < 3; j++ {
						wantAcc[e+j] += sums[e]
					}
				}
				if pat[1] {
					wantG += sums[e]
				}
			}
			if got := acc.DataRO(); !slices.Equal(got, wantAcc) {
				t.Errorf("call %d %v: acc = %v, want %v", i, pat, got, wantAcc)
			}
			if got := g.Value(); got != wantG {
				t.Errorf("call %d %v: g = %v, want %v", i, pat, got, wantG)
			}
		}
	})
}

var kIdxVec = op2.NewKernel(`
void idxvec(const int *e, const int *c0, const int *c1, const int *c2, const int **nv, int *out) {
  out[0] = *e; out[1] = *c0; out[2] = *c1; out[3] = *c2; out[4] = nv[0][0] + nv[1][0] + nv[2][0];
}`, "idxvec")

// m.ArgIdx on every column of an arity-3 map, beside an ArgVec of the same map.
func TestArgIdxVectorMap(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 257
		nodes := must(op2.NewSet(n+2, "nodes"))
		tris := must(op2.NewSet(n, "tris"))
		v := make([]int32, 3*n)
		for e := 0; e < n; e++ {
			v[3*e], v[3*e+1], v[3*e+2] = int32(e+2), int32(e), int32(e+1)
		}
		m := must(op2.NewMap(tris, nodes, 3, v, "tri"))
		nid := make([]int32, n+2)
		for i := range nid {
			nid[i] = int32(i * 7)
		}
		nd := must(op2.NewDat(nodes, 1, nid, "nid"))
		out := must(op2.NewDat[int32](tris, 5, nil, "out"))
		check(t, op2.ParLoop(kIdxVec, tris, op2.ArgIdx(), m.ArgIdx(0), m.ArgIdx(1), m.ArgIdx(2), nd.ArgVec(op2.Read, m), out.Arg(op2.Write)))
		got := out.DataRO()
		for e := 0; e < n; e++ {
			want := []int32{int32(e), v[3*e], v[3*e+1], v[3*e+2], 7 * (v[3*e] + v[3*e+1] + v[3*e+2])}
			if !slices.Equal(got[5*e:5*e+5], want) {
				t.Fatalf("element %d: %v, want %v", e, got[5*e:5*e+5], want)
			}
		}
	})
}

// MIN/MAX through maps with NaN candidates and NaN targets: same bits on every backend.
func TestMinMaxNaNSameEverywhere(t *testing.T) {
	var ref []uint64
	var refName string
	each(t, func(t *testing.T, b bk) {
		nodes, edges, pedge := ring(t, 6)
		nan := math.NaN()
		wd := must(op2.NewDat(edges, 1, []float64{nan, 3, nan, -1, 5, 2}, "w"))
		lo := must(op2.NewDat(nodes, 1, []float64{10, nan, 10, 10, 10, nan}, "lo"))
		check(t, op2.ParLoop(kMin, edges, wd.Arg(op2.Read), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1)))
		got := lo.DataRO()
		bits := make([]uint64, len(got))
		for i, v := range got {
			bits[i] = math.Float64bits(v)
		}
		t.Logf("%s: %v", b.name, got)
		if ref == nil {
			ref, refName = bits, b.name
		} else if !slices.Equal(ref, bits) {
			t.Errorf("%s gives %v; %s gave bits %x", b.name, got, refName, ref)
		}
	})
}

var kMinI = op2.NewKernel(`void mini(const int *w, int *a, int *b) { *a = *w; *b = *w; }`, "mini")
var kMaxU = op2.NewKernel(`void maxu(const unsigned int *w, unsigned int *a, unsigned int *b) { *a = *w; *b = *w; }`, "maxu")
var kMinL = op2.NewKernel(`void minl(const long long *w, long long *a, long long *b) { a[0] = w[0]; b[0] = w[0]; a[1] = w[1]; b[1] = w[1]; }`, "minl")
var kMaxF = op2.NewKernel(`void maxf(const float *w, float *a, float *b) { *a = *w; *b = *w; }`, "maxf")

// MIN/MAX through maps with integer types at their extremes.
func TestMinMaxIntExtremes(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		nodes, edges, pedge := ring(t, 4)
		wi := must(op2.NewDat(edges, 1, []int32{math.MaxInt32, math.MinInt32, 5, math.MaxInt32}, "wi"))
		li := must(op2.NewDat(nodes, 1, []int32{math.MaxInt32, 0, math.MaxInt32, math.MaxInt32}, "li"))
		check(t, op2.ParLoop(kMinI, edges, wi.Arg(op2.Read), li.ArgMap(op2.Min, pedge, 0), li.ArgMap(op2.Min, pedge, 1)))
		// node k is touched by edges k-1 and k.
		if got, want := li.DataRO(), []int32{math.MaxInt32, math.MinInt32, math.MinInt32, 5}; !slices.Equal(got, want) {
			t.Errorf("int32 min: %v, want %v", got, want)
		}
		wu := must(op2.NewDat(edges, 1, []uint32{math.MaxUint32, 0, 7, 1}, "wu"))
		hu := must(op2.NewDat(nodes, 1, []uint32{0, 0, 3, 0}, "hu"))
		check(t, op2.ParLoop(kMaxU, edges, wu.Arg(op2.Read), hu.ArgMap(op2.Max, pedge, 0), hu.ArgMap(op2.Max, pedge, 1)))
		if got, want := hu.DataRO(), []uint32{math.MaxUint32, math.MaxUint32, 7, 7}; !slices.Equal(got, want) {
			t.Errorf("uint32 max: %v, want %v", got, want)
		}
		wl := must(op2.NewDat(edges, 2, []int64{math.MaxInt64, 1 << 40, math.MinInt64, -(1 << 40), 3, 4, 5, 6}, "wl"))
		ll := must(op2.NewDat(nodes, 2, []int64{math.MaxInt64, math.MaxInt64, 0, 0, math.MaxInt64, math.MaxInt64, 1, 1}, "ll"))
		check(t, op2.ParLoop(kMinL, edges, wl.Arg(op2.Read), ll.ArgMap(op2.Min, pedge, 0), ll.ArgMap(op2.Min, pedge, 1)))
		want := []int64{5, 6, math.MinInt64, -(1 << 40), math.MinInt64, -(1 << 40), 1, 1}
		if got := ll.DataRO(); !slices.Equal(got, want) {
			t.Errorf("int64 min: %v, want %v", got, want)
		}
		wf := must(op2.NewDat(edges, 1, []float32{float32(math.Inf(-1)), -math.MaxFloat32, -3, -4}, "wf"))
		hf := must(op2.NewDat(nodes, 1, []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}, "hf"))
		check(t, op2.ParLoop(kMaxF, edges, wf.Arg(op2.Read), hf.ArgMap(op2.Max, pedge, 0), hf.ArgMap(op2.Max, pedge, 1)))
		wantF := []float32{-4, -math.MaxFloat32, -3, -3}
		if got := hf.DataRO(); !slices.Equal(got, wantF) {
			t.Errorf("float32 max: %v, want %v", got, wantF)
		}
	})
}

var kIncTypes = op2.NewKernel(`
void inctypes(const int *e, long long *a, long long *b, unsigned int *u, float *f0, float *f1) {
  *a += 1LL << 33; *b += -(1LL << 33) + *e; u[0] += 4000000000u; u[1] += 1u; *f0 += 0.5f; *f1 += 0.25f;
}`, "inctypes")

// Indirect increments of int64/uint32/float32 (the atomics scheme needs 64-bit atomics and wrap-around).
func TestIndirectIncTypes(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 500
		nodes, edges, pedge := ring(t, n)
		a := must(op2.NewDat[int64](nodes, 1, nil, "a"))
		u := must(op2.NewDat[uint32](nodes, 2, nil, "u"))
		f := must(op2.NewDat[float32](nodes, 1, nil, "f"))
		check(t, op2.ParLoop(kIncTypes, edges, op2.ArgIdx(), a.ArgMap(op2.Inc, pedge, 0), a.ArgMap(op2.Inc, pedge, 1), u.ArgMap(op2.Inc, pedge, 1), f.ArgMap(op2.Inc, pedge, 0), f.ArgMap(op2.Inc, pedge, 1)))
		ga, gu, gf := a.DataRO(), u.DataRO(), f.DataRO()
		for nd := 0; nd < n; nd++ {
			// node nd: column 0 of edge nd, column 1 of edge nd-1.
			prev := (nd - 1 + n) % n
			wa := int64(1<<33) - (1 << 33) + int64(prev)
			if ga[nd] != wa {
				t.Fatalf("a[%d] = %d, want %d", nd, ga[nd], wa)
			}
			if gu[2*nd] != 4000000000 || gu[2*nd+1] != 1 {
				t.Fatalf("u[%d] = %d %d", nd, gu[2*nd], gu[2*nd+1])
			}
			if gf[nd] != 0.75 {
				t.Fatalf("f[%d] = %v", nd, gf[nd])
			}
		}
	})
}
