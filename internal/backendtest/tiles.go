package backendtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goop2/op2"
)

// tileOps are the steps of testTiledChains' sequences: chainOps' loops,
// and one host access in twenty (which forces the loops recorded so
// far), so that most chains are long.
var tileOps = []string{"scale", "scale-subset", "gather", "scatter", "pull", "reduce", "count"}

// testTiledChains runs random sequences of loops at once and in lazy mode
// with sparse tiling (Config.Tile) of several sizes (1 seed element per
// tile, a few, more than any set has), with and without SIMD lanes, and,
// on openmp, 1 to 3 threads, and
// checks that they give the same bits: the values are integers, so
// increments reaching an element in another order give the same sums.
// Only the host backends run loops in tiles; it checks that they did.
func testTiledChains(t *testing.T, backend, cache string) {
	defer func() { check(t, op2.Configure(op2.Config{Backend: backend, CacheDir: cache, PlanCheck: true})) }()
	defer op2.EnableTiming(false)
	r := rand.New(rand.NewPCG(7, 8))
	m := newRandomMesh(r, 3000, 900, 3, false)
	threads := []int{1}
	if backend == "openmp" {
		threads = []int{1, 2, 3}
	}
	sizes := []int{1, 7, 150, 100000}
	if testing.Short() {
		sizes = []int{1, 150, 100000}
	}
	index := map[string]int{}
	for i, op := range chainOps {
		index[op] = i
	}
	for _, th := range threads {
		for si, size := range sizes {
			// Every other size also fuses the loops that fuse
			// (Config.Fusion "on"): the tiles then run fused loops.
			// The sizes take turns to run the loops that can have SIMD
			// lanes in 8 or 4 of them (Config.SIMD): the tiles then run
			// each run of elements in lanes.
			fusion := []string{"off", "on"}[si%2]
			simd := []string{"off", "8", "4"}[si%3]
			ops := make([]int, 16)
			names := make([]string, len(ops))
			for i := range ops {
				name := tileOps[r.IntN(len(tileOps))]
				if r.IntN(20) == 0 {
					name = chainOps[r.IntN(len(chainOps))]
				}
				ops[i], names[i] = index[name], name
			}
			check(t, op2.Configure(op2.Config{Backend: backend, Threads: th, CacheDir: cache, PlanCheck: true}))
			want := runChainOps(t, m, ops, false)
			// Tuning off whatever OP2_TUNE says: with a tuner, loops
			// run one by one (tileable), and the suite's run that
			// holds the chain tests (firstChains) may be one with
			// OP2_TUNE=1 when -run picks it alone.
			check(t, op2.Configure(op2.Config{Backend: backend, Threads: th, CacheDir: cache, PlanCheck: true, Lazy: true, Tile: size, Timing: true, Fusion: fusion, SIMD: simd}.Explicit("Tune")))
			op2.ResetTimings()
			got := runChainOps(t, m, ops, false)
			tiled := false
			for _, lt := range op2.Timings() {
				tiled = tiled || lt.Tuned == "tiled"
			}
			if !tiled {
				t.Errorf("%s, %d threads, tile %d: no loop ran in tiles", backend, th, size)
			}
			what := fmt.Sprintf("%s, %d threads, tile %d, fusion %s, SIMD %s, steps %v", backend, th, size, fusion, simd, names)
			sameOutcome(t, what, got, want)
		}
	}
}
