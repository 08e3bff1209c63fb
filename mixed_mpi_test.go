package op2_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// mixedResult is what the mixed scenario computes, gathered on rank 0
// (Globals on every rank).
type mixedResult struct {
	U0, U1, S, V0, V1, Y0, Y1 []float64
	Total, Count              float64
	Dense                     [2][2][][]float64
	Owned                     [2]int // this rank's nodes and triangles
}

// mixedScenario declares a random triangle mesh (rank 0 declares it
// all) with a P1 (dim 2) × P0 mixed dat, partitions it when partitioner
// is not "", and runs: increments through the mixed map, a read of the
// incremented values through a column of it (whose halo must be
// exchanged), a loop over the mixed set, and the assembly and product of
// a 2×2 block matrix.
func mixedScenario(t *testing.T, partitioner string) mixedResult {
	const nn, nt = 90, 160
	rng := rand.New(rand.NewPCG(3, 4))
	n := func(total int) int {
		if op2.Rank() == 0 {
			return total
		}
		return 0
	}
	var tab []int32
	for range nt {
		for _, v := range rng.Perm(nn)[:3] {
			tab = append(tab, int32(v))
		}
	}
	nodes := must(op2.NewSet(n(nn), "nodes"))
	tris := must(op2.NewSet(n(nt), "tris"))
	ptri := must(op2.NewMap(tris, nodes, 3, tab[:3*n(nt)], "ptri"))
	ident := must(op2.NewMap(tris, tris, 1, iota32[int32](n(nt)), "ident"))
	second := make([]int32, 0, nt)
	for e := range n(nt) {
		second = append(second, tab[3*e+1])
	}
	pSecond := must(op2.NewMap(tris, nodes, 1, second, "second"))
	wv := make([]float64, n(nt))
	for e := range wv {
		wv[e] = float64(e%7 + 1)
	}
	w := must(op2.NewDat(tris, 1, wv, "w"))
	ms := must(op2.NewMixedSet([]*op2.Set{nodes, tris}, "P1×P0"))
	u := must(op2.NewMixedDat[float64](ms, []int{2, 1}, nil, "u"))
	v := must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "v"))
	x := must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "x"))
	y := must(op2.NewMixedDat[float64](ms, []int{1, 1}, nil, "y"))
	s := must(op2.NewDat[float64](tris, 1, nil, "s"))
	if partitioner != "" {
		p := map[string]op2.Partitioner{"block": op2.BlockPartitioner(), "ptscotch": op2.PTScotchPartitioner(ptri)}[partitioner]
		must(op2.Partition(p))
	}
	mm := must(op2.NewMixedMap([]*op2.Map{ptri, ident}, "cell dofs"))
	col := must(op2.NewMixedMap([]*op2.Map{pSecond, ident}, "second node and cell"))
	inc := op2.NewKernel(`
void assemble(const double *w, double **a, double **b) {
  for (int i = 0; i < 3; i++) { a[i][0] += w[0] * (i + 1); a[i][1] += 1; }
  b[0][0] += 2 * w[0];
}`, "assemble")
	check(t, op2.ParLoop(inc, tris, w.Arg(op2.Read), u.ArgVec(op2.Inc, mm)))
	total := must(op2.NewGlobal[float64](1, nil, "total"))
	gather := op2.NewKernel(`
void gather(const double *a, const double *b, double *s, double *g) {
  s[0] = a[0] + a[1] + b[0];
  g[0] += s[0];
}`, "gather")
	check(t, op2.ParLoop(gather, tris, u.ArgMap(op2.Read, col, 0), s.Arg(op2.Write), total.Arg(op2.Inc)))
	count := must(op2.NewGlobal[float64](1, nil, "count"))
	fill := op2.NewKernel(`void fill(const int *i, double *v, double *g) { v[0] = *i + 0.5; g[0] += v[0]; }`, "fill")
	check(t, op2.ParLoop(fill, ms, op2.ArgIdx(), v.Arg(op2.Write), count.Arg(op2.Inc)))

	sp := must(op2.NewMixedSparsity(ms, []int{1, 1}, ms, []int{1, 1}, []op2.MixedMapPair{{Row: mm, Col: mm}}, "sp"))
	A := must(op2.NewMixedMat[float64](sp, "A"))
	check(t, op2.ParLoop(op2.NewKernel(mixedMatKernelSource, "mixed_mat"), tris, op2.ArgIdx(), A.Arg(op2.Inc, mm, mm)))
	setx := op2.NewKernel(`void setx(const int *i, double *x) { x[0] = (*i % 5) - 2; }`, "setx")
	check(t, op2.ParLoop(setx, ms, op2.ArgIdx(), x.Arg(op2.Write)))
	check(t, A.Mult(x, y))

	out := mixedResult{Total: total.DataRO()[0], Count: count.DataRO()[0], Owned: [2]int{nodes.Size(), tris.Size()}}
	out.U0, out.U1 = must(u.Block(0).Gather()), must(u.Block(1).Gather())
	out.S = must(s.Gather())
	out.V0, out.V1 = must(v.Block(0).Gather()), must(v.Block(1).Gather())
	out.Y0, out.Y1 = must(y.Block(0).Gather()), must(y.Block(1).Gather())
	for i := range 2 {
		for j := range 2 {
			out.Dense[i][j] = must(A.Block(i, j).Dense())
		}
	}
	return out
}

// mixedMatKernelSource is internal/backendtest's P1 × P0 element matrix.
const mixedMatKernelSource = `
void mixed_mat(const int *e, double *a00, double *a01, double *a10, double *a11) {
  double s = (*e % 5) + 1;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) a00[i * 3 + j] = s * ((i * 3 + j) % 7 + 1) * 0.25;
    a01[i] = -s * (i + 1) * 0.5;
    a10[i] = s * (i + 2) * 0.25;
  }
  a11[0] = s;
}`

// TestMixedOnRanks runs the mixed scenario on 2 ranks (block partition;
// without -short also on opencl) and 3 ranks (PT-Scotch) and compares with one process, bit for bit
// (every value is exact): the blocks are plain Dats, partitioned and
// exchanged as any other.
func TestMixedOnRanks(t *testing.T) {
	if mpitest.InRanks() {
		var want mixedResult
		check(t, json.Unmarshal(must(os.ReadFile(os.Getenv("OP2_MIXED_EXPECT"))), &want))
		if b := os.Getenv("OP2_MIXED_BACKEND"); b != "" {
			check(t, op2.Use(b))
			defer op2.Use("sequential")
		}
		got := mixedScenario(t, os.Getenv("OP2_MPI_PARTITIONER"))
		if got.Owned[0] >= want.Owned[0] || got.Owned[1] >= want.Owned[1] {
			t.Errorf("rank %d of %d owns %v of the %v nodes and triangles: the mesh is not distributed", op2.Rank(), op2.Ranks(), got.Owned, want.Owned)
		}
		if got.Total != want.Total || got.Count != want.Count {
			t.Errorf("rank %d of %d: Globals total %v, count %v; one process %v, %v", op2.Rank(), op2.Ranks(), got.Total, got.Count, want.Total, want.Count)
		}
		if op2.Rank() == 0 {
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"u[0]", got.U0, want.U0}, {"u[1]", got.U1, want.U1}, {"s", got.S, want.S}, {"v[0]", got.V0, want.V0},
				{"v[1]", got.V1, want.V1}, {"y[0]", got.Y0, want.Y0}, {"y[1]", got.Y1, want.Y1}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%d ranks: %s differs from one process:\n got %v\nwant %v", op2.Ranks(), c.name, c.got, c.want)
				}
			}
			for i := range 2 {
				for j := range 2 {
					for r := range want.Dense[i][j] {
						if !slices.Equal(got.Dense[i][j][r], want.Dense[i][j][r]) {
							t.Fatalf("%d ranks: block (%d, %d) row %d = %v, one process %v", op2.Ranks(), i, j, r, got.Dense[i][j][r], want.Dense[i][j][r])
						}
					}
				}
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := mixedScenario(t, "")
	path := filepath.Join(t.TempDir(), "want.json")
	check(t, os.WriteFile(path, must(json.Marshal(want)), 0o600))
	cache := os.Getenv("OP2_CACHE_DIR") // the ranks share this process's compiled loops
	cases := []ranksCase{{2, "block", nil}, {3, "ptscotch", nil}}
	if !testing.Short() {
		cases = append(cases, ranksCase{2, "block", []string{"OP2_MIXED_BACKEND=opencl"}})
	}
	for _, r := range cases {
		name := r.partitioner
		if len(r.env) > 0 {
			name += "/opencl"
		}
		t.Run(name, func(t *testing.T) {
			if len(r.env) > 0 {
				needBackend(t, "opencl")
			}
			mpiRun(t, r.ranks, 2*time.Minute, append([]string{"OP2_MIXED_EXPECT=" + path, "OP2_MPI_PARTITIONER=" + r.partitioner, "OP2_TEST_CACHE_DIR=" + cache}, r.env...)...)
		})
	}
}
