package backendtest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goop2/op2"
)

// Conformance tests of mixed spaces: loops with mixed dats through mixed
// maps, loops over mixed sets, and block matrices, each compared with the
// same work written by hand, block by block, with plain Dats and Mats.
func init() {
	conformance = append(conformance, []struct {
		name string
		test func(t *testing.T)
	}{
		{"MixedLoops", testMixedLoops},
		{"MixedMatAssembly", testMixedMatAssembly},
	}...)
}

// mixedMesh is a random triangle mesh with the mixed map (triangle →
// its 3 nodes, triangle → itself) of a P1 × P0 space.
type mixedMesh struct {
	*matMesh
	ident *op2.Map
	mset  *op2.MixedSet
	mmap  *op2.MixedMap
}

func newMixedMesh(t *testing.T, seed uint64) *mixedMesh {
	m := &mixedMesh{matMesh: newMatMesh(rand.New(rand.NewPCG(seed, 99)), 700, 1, 250)}
	m.ident = must(op2.NewMap(m.tris, m.tris, 1, iota32[int32](m.tris.Size()), "ident"))
	m.mset = must(op2.NewMixedSet([]*op2.Set{m.nodes, m.tris}, "P1×P0"))
	m.mmap = must(op2.NewMixedMap([]*op2.Map{m.ptri, m.ident}, "cell dofs"))
	return m
}

// testMixedLoops runs loops on a mixed dat (P1 nodes with dim 2, P0
// triangles with dim 1): increments through a mixed map (ArgVec), reads
// through one column of it (ArgMap) with a reduction, and a loop over
// the mixed set; it compares each with the hand-written loop on the
// blocks and with the values computed in Go (exact, so every backend
// gives the same bits).
func testMixedLoops(t *testing.T) {
	m := newMixedMesh(t, 1)
	nt, nn := m.tris.Size(), m.nn
	wv := make([]float64, nt)
	for e := range wv {
		wv[e] = float64(e%7 + 1)
	}
	w := must(op2.NewDat(m.tris, 1, wv, "w"))
	u := must(op2.NewMixedDat[float64](m.mset, []int{2, 1}, nil, "u"))
	ref0 := must(op2.NewDat[float64](m.nodes, 2, nil, "ref0"))
	ref1 := must(op2.NewDat[float64](m.tris, 1, nil, "ref1"))
	inc := op2.NewKernel(`
void assemble(const double *w, double **a, double **b) {
  for (int i = 0; i < 3; i++) { a[i][0] += w[0] * (i + 1); a[i][1] += 1; }
  b[0][0] += 2 * w[0];
}`, "assemble")
	check(t, op2.ParLoop(inc, m.tris, w.Arg(op2.Read), u.ArgVec(op2.Inc, m.mmap)))
	check(t, op2.ParLoop(inc, m.tris, w.Arg(op2.Read), ref0.ArgVec(op2.Inc, m.ptri), ref1.ArgVec(op2.Inc, m.ident)))
	want0, want1 := make([]float64, 2*nn), make([]float64, nt)
	for e := range nt {
		for i := range 3 {
			n := m.triTab[3*e+i]
			want0[2*n] += wv[e] * float64(i+1)
			want0[2*n+1]++
		}
		want1[e] += 2 * wv[e]
	}
	got := u.DataRO()
	if !slices.Equal(got[0], want0) || !slices.Equal(ref0.DataRO(), want0) {
		t.Fatalf("block 0 after the mixed increment:\n got %v\n ref %v\nwant %v", got[0][:8], ref0.DataRO()[:8], want0[:8])
	}
	if !slices.Equal(got[1], want1) || !slices.Equal(ref1.DataRO(), want1) {
		t.Fatalf("block 1 after the mixed increment:\n got %v\n ref %v\nwant %v", got[1][:8], ref1.DataRO()[:8], want1[:8])
	}

	// Through column 1 of every block's map (block 1's map has one
	// column: ArgMap takes the same column of each, so use column 0 for
	// both in a second mixed map whose first block is the triangles'
	// second node).
	second := must(op2.NewMap(m.tris, m.nodes, 1, everyThird(m.triTab, 1), "second node"))
	col := must(op2.NewMixedMap([]*op2.Map{second, m.ident}, "second node and cell"))
	s := must(op2.NewDat[float64](m.tris, 1, nil, "s"))
	total := must(op2.NewGlobal[float64](1, nil, "total"))
	gather := op2.NewKernel(`
void gather(const double *a, const double *b, double *s, double *g) {
  s[0] = a[0] + a[1] + b[0];
  g[0] += s[0];
}`, "gather")
	check(t, op2.ParLoop(gather, m.tris, u.ArgMap(op2.Read, col, 0), s.Arg(op2.Write), total.Arg(op2.Inc)))
	var sum float64
	for e, v := range s.DataRO() {
		n := m.triTab[3*e+1]
		if want := want0[2*n] + want0[2*n+1] + want1[e]; v != want {
			t.Fatalf("s[%d] = %v, want %v", e, v, want)
		}
		sum += v
	}
	if total.DataRO()[0] != sum {
		t.Fatalf("total = %v, want %v", total.DataRO()[0], sum)
	}

	// A loop over the mixed set: one loop per block.
	v := must(op2.NewMixedDat[float64](m.mset, []int{1, 1}, nil, "v"))
	count := must(op2.NewGlobal[float64](1, []float64{0.25}, "count"))
	fill := op2.NewKernel(`void fill(const int *i, double *v, double *g) { v[0] = *i + 0.5; g[0] += v[0]; }`, "fill")
	check(t, op2.ParLoop(fill, m.mset, op2.ArgIdx(), v.Arg(op2.Write), count.Arg(op2.Inc)))
	want := 0.25
	for b, vals := range v.DataRO() {
		for i, x := range vals {
			if x != float64(i)+0.5 {
				t.Fatalf("v block %d [%d] = %v, want %v", b, i, x, float64(i)+0.5)
			}
			want += x
		}
	}
	if count.DataRO()[0] != want {
		t.Fatalf("count = %v, want %v", count.DataRO()[0], want)
	}
}

// everyThird returns column c of a table of 3 columns.
func everyThird(tab []int32, c int) []int32 {
	out := make([]int32, 0, len(tab)/3)
	for i := c; i < len(tab); i += 3 {
		out = append(out, tab[i])
	}
	return out
}

// mixedMatKernel fills the four blocks of a P1 × P0 element matrix:
// 3×3, 3×1, 1×3 and 1×1, with values exact in float64.
const mixedMatKernel = `
void mixed_mat(const int *e, double *a00, double *a01, double *a10, double *a11) {
  double s = (*e % 5) + 1;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) a00[i * 3 + j] = s * ((i * 3 + j) % 7 + 1) * 0.25;
    a01[i] = -s * (i + 1) * 0.5;
    a10[i] = s * (i + 2) * 0.25;
  }
  a11[0] = s;
}`

// testMixedMatAssembly assembles a 2×2 block matrix on the P1 × P0 space
// through the mixed map, and the same blocks as four plain Mats in one
// hand-written loop, and compares both with the sums made in Go; then
// the block product y = A x against the dense blocks.
func testMixedMatAssembly(t *testing.T) {
	m := newMixedMesh(t, 2)
	sp := must(op2.NewMixedSparsity(m.mset, []int{1, 1}, m.mset, []int{1, 1}, []op2.MixedMapPair{{Row: m.mmap, Col: m.mmap}}, "sp"))
	A := must(op2.NewMixedMat[float64](sp, "A"))
	k := op2.NewKernel(mixedMatKernel, "mixed_mat")
	check(t, op2.ParLoop(k, m.tris, op2.ArgIdx(), A.Arg(op2.Inc, m.mmap, m.mmap)))
	maps := []*op2.Map{m.ptri, m.ident}
	var ref [2][2]*op2.Mat[float64]
	args := []op2.Arg{op2.ArgIdx()}
	for i := range 2 {
		for j := range 2 {
			bsp := must(op2.NewSparsity(m.mset.Block(i), 1, m.mset.Block(j), 1, []op2.MapPair{{Row: maps[i], Col: maps[j]}}, "ref sp"))
			ref[i][j] = must(op2.NewMat[float64](bsp, "ref"))
			args = append(args, ref[i][j].Arg(op2.Inc, maps[i], maps[j]))
		}
	}
	check(t, op2.ParLoop(k, m.tris, args...))

	nt := m.tris.Size()
	sizes := []int{m.nn, nt}
	var want [2][2][][]float64
	for i := range 2 {
		for j := range 2 {
			want[i][j] = make([][]float64, sizes[i])
			for r := range want[i][j] {
				want[i][j][r] = make([]float64, sizes[j])
			}
		}
	}
	for e := range nt {
		s := float64(e%5 + 1)
		for i := range 3 {
			ni := m.triTab[3*e+i]
			for j := range 3 {
				want[0][0][ni][m.triTab[3*e+j]] += s * float64((i*3+j)%7+1) * 0.25
			}
			want[0][1][ni][e] += -s * float64(i+1) * 0.5
			want[1][0][e][ni] += s * float64(i+2) * 0.25
		}
		want[1][1][e][e] += s
	}
	dense := [2][2][][]float64{}
	for i := range 2 {
		for j := range 2 {
			dense[i][j] = must(A.Block(i, j).Dense())
			refd := must(ref[i][j].Dense())
			for r := range want[i][j] {
				if !slices.Equal(dense[i][j][r], want[i][j][r]) || !slices.Equal(refd[r], want[i][j][r]) {
					t.Fatalf("block (%d, %d) row %d:\n got %v\n ref %v\nwant %v", i, j, r, dense[i][j][r], refd[r], want[i][j][r])
				}
			}
		}
	}

	// y = A x, block by block.
	x := must(op2.NewMixedDat[float64](m.mset, []int{1, 1}, nil, "x"))
	y := must(op2.NewMixedDat[float64](m.mset, []int{1, 1}, nil, "y"))
	xs := x.Data()
	for b := range xs {
		for i := range xs[b] {
			xs[b][i] = float64((i+b)%5) - 2
		}
	}
	check(t, A.Mult(x, y))
	ys := y.DataRO()
	for i := range 2 {
		for r := range sizes[i] {
			var s float64
			for j := range 2 {
				var p float64 // Mat.Mult's sum for block (i, j)
				for c, v := range dense[i][j][r] {
					if v != 0 {
						p += v * xs[j][c]
					}
				}
				s += p
			}
			if ys[i][r] != s {
				t.Fatalf("(A x) block %d [%d] = %v, want %v", i, r, ys[i][r], s)
			}
		}
	}
	check(t, A.Zero())
	check(t, op2.ParLoop(k, m.tris, op2.ArgIdx(), A.Arg(op2.Inc, m.mmap, m.mmap)))
	if got := must(A.Block(1, 0).Dense()); !slices.Equal(got[3], want[1][0][3]) {
		t.Fatalf("zeroed and assembled again: block (1, 0) row 3 = %v, want %v", got[3], want[1][0][3])
	}
}
