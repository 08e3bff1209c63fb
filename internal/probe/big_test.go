package probe_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// Large dims through maps: INC dim 300, MIN dim 32 (256 bytes: the limit).
func TestLargeDimIndirect(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		const D = 300
		nodes, edges, pedge := ring(t, 200)
		acc := must(op2.NewDat[float64](nodes, D, nil, "acc"))
		k := op2.NewKernel(fmt.Sprintf(`void bigi(const int *e, double *a, double *b) { for (int i = 0; i < %d; i++) { a[i] += i; b[i] += *e; } }`, D), "bigi")
		check(t, op2.ParLoop(k, edges, op2.ArgIdx(), acc.ArgMap(op2.Inc, pedge, 0), acc.ArgMap(op2.Inc, pedge, 1)))
		got := acc.DataRO()
		for nd := 0; nd < 200; nd++ {
			prev := (nd + 199) % 200
			for i := 0; i < D; i++ {
				if got[nd*D+i] != float64(i+prev) {
					t.Fatalf("acc[%d][%d] = %v, want %v", nd, i, got[nd*D+i], i+prev)
				}
			}
		}
		lo := must(op2.NewDat(nodes, 32, slices.Repeat([]float64{1e9}, 200*32), "lo"))
		km := op2.NewKernel(`void bigm(const int *e, double *a, double *b) { for (int i = 0; i < 32; i++) { a[i] = *e + i; b[i] = *e - i; } }`, "bigm")
		check(t, op2.ParLoop(km, edges, op2.ArgIdx(), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1)))
		gl := lo.DataRO()
		for nd := 0; nd < 200; nd++ {
			prev := (nd + 199) % 200
			for i := 0; i < 32; i++ {
				want := min(float64(nd+i), float64(prev-i))
				if gl[nd*32+i] != want {
					t.Fatalf("lo[%d][%d] = %v, want %v", nd, i, gl[nd*32+i], want)
				}
			}
		}
	})
}

// Dim 0 dats: declared or refused, never a crash.
func TestDimZero(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		s := must(op2.NewSet(3, "s"))
		d, err := op2.NewDat[float64](s, 0, nil, "d0")
		if err != nil {
			t.Logf("dim 0 refused: %v", err)
			return
		}
		k := op2.NewKernel(`void z0(double *x) { }`, "z0")
		t.Logf("dim 0 loop: %v", op2.ParLoop(k, s, d.Arg(op2.RW)))
		t.Logf("range: %v", must(d.Range(0, 3)))
		check(t, d.Zero())
	})
}

// Atomics scheme: INC and MIN of different dats in one loop (falls back to staged), with ArgVec INC and Opt, on a subset.
func TestAtomicsMixedLoop(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		n := 400
		nodes := must(op2.NewSet(n+2, "nodes"))
		tris := must(op2.NewSet(n, "tris"))
		v := make([]int32, 3*n)
		for e := 0; e < n; e++ {
			v[3*e], v[3*e+1], v[3*e+2] = int32(e), int32(e+1), int32(e+2)
		}
		m := must(op2.NewMap(tris, nodes, 3, v, "tri"))
		acc := must(op2.NewDat[int64](nodes, 2, nil, "acc"))
		lo := must(op2.NewDat(nodes, 1, slices.Repeat([]int32{1 << 30}, n+2), "lo"))
		cnt := must(op2.NewGlobal(1, []int64{0}, "cnt"))
		k := op2.NewKernel(`
void mix(const int *e, long long **a, int *l0, int *l2, long long *c) {
  for (int j = 0; j < 3; j++) { a[j][0] += 1; a[j][1] += *e; }
  if (l0) { *l0 = *e; *l2 = *e; }
  *c += 1;
}`, "mix")
		idx := []int32{}
		for i := 0; i < n; i += 2 {
			idx = append(idx, int32(i))
		}
		sub := must(op2.NewSubset(tris, idx))
		for _, on := range []bool{false, true, false} {
			check(t, op2.ParLoop(k, sub, op2.ArgIdx(), acc.ArgVec(op2.Inc, m), op2.Opt(on, lo.ArgMap(op2.Min, m, 0)), op2.Opt(on, lo.ArgMap(op2.Min, m, 2)), cnt.Arg(op2.Inc)))
		}
		wantAcc := make([]int64, 2*(n+2))
		wantLo := slices.Repeat([]int32{1 << 30}, n+2)
		for _, e := range idx {
			for j := 0; j < 3; j++ {
				wantAcc[2*(int(e)+j)] += 3
				wantAcc[2*(int(e)+j)+1] += 3 * int64(e)
			}
			wantLo[e] = min(wantLo[e], e)
			wantLo[e+2] = min(wantLo[e+2], e)
		}
		if got := acc.DataRO(); !slices.Equal(got, wantAcc) {
			t.Errorf("acc = %v..., want %v...", got[:10], wantAcc[:10])
		}
		if got := lo.DataRO(); !slices.Equal(got, wantLo) {
			t.Errorf("lo = %v..., want %v...", got[:10], wantLo[:10])
		}
		if cnt.Value() != int64(3*len(idx)) {
			t.Errorf("cnt = %v, want %v", cnt.Value(), 3*len(idx))
		}
	})
}
