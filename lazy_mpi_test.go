package op2_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpitest"
)

// The loops of TestLazyOnRanks, on unsigned integers (whose sums are
// exact in any order) over a ring: a and b on its nodes, e on its edges.
var (
	lazyScale  = op2.NewKernel(`void lz_scale(unsigned *a, const unsigned *b) { *a = 3u * *a + *b; }`, "lz_scale")
	lazyDiff   = op2.NewKernel(`void lz_diff(const unsigned *a0, const unsigned *a1, unsigned *e) { *e = *a0 - 5u * *a1; }`, "lz_diff")
	lazySpread = op2.NewKernel(`void lz_spread(const unsigned *e, unsigned *b0, unsigned *b1) { *b0 += *e; *b1 -= 2u * *e; }`, "lz_spread")
	lazySum    = op2.NewKernel(`void lz_sum(const unsigned *a, unsigned *s) { *s += *a; }`, "lz_sum")
	lazyMax    = op2.NewKernel(`void lz_max(const unsigned *e, unsigned *m) { if (*e > *m) *m = *e; }`, "lz_max")
	lazyOpt    = op2.NewKernel(`void lz_opt(const unsigned *e, unsigned *c0) { if (c0) *c0 += *e ^ 1u; }`, "lz_opt")
	lazyCopy   = op2.NewKernel(`void lz_copy(const unsigned *b, unsigned *c) { *c = *b + 1u; }`, "lz_copy")
	lazyEdge   = op2.NewKernel(`void lz_edge(unsigned *f, const unsigned *e) { *f = 3u * *f + *e + 1u; }`, "lz_edge")
	lazyPush   = op2.NewKernel(`void lz_push(const unsigned *f, const unsigned *a0, unsigned *b0, unsigned *b1) { *b0 += *f + *a0; *b1 += *f ^ 3u; }`, "lz_push")
	lazyRWMap  = op2.NewKernel(`void lz_rwm(const unsigned *f, unsigned *c0) { *c0 = 3u * *c0 + *f; }`, "lz_rwm")
	lazyIMax   = op2.NewKernel(`void lz_imax(const unsigned *e, unsigned *c0, unsigned *c1) { if (*e > *c0) *c0 = *e; if (*e + 1u > *c1) *c1 = *e + 1u; }`, "lz_imax")
	lazyMinMax = op2.NewKernel(`void lz_mm(const unsigned *b, unsigned *lo, unsigned *hi) { if (*b < *lo) *lo = *b; if (*b > *hi) *hi = *b; }`, "lz_mm")
	lazyGRead  = op2.NewKernel(`void lz_gread(const unsigned *x, const unsigned *m, unsigned *a) { *a += *x ^ *m; }`, "lz_gread")
	lazyGRW    = op2.NewKernel(`void lz_grw(const unsigned *a, unsigned *x) { *x += *a; }`, "lz_grw")
	lazyMix    = op2.NewKernel(`void lz_mix(unsigned *v) { *v = 5u * *v + 2u; }`, "lz_mix")
	lazyWMap   = op2.NewKernel(`void lz_wm(const unsigned *f, unsigned *c0) { *c0 = 7u * *f + 1u; }`, "lz_wm")
	lazyMixInc = op2.NewKernel(`void lz_minc(const unsigned *e, unsigned *v0, unsigned *v1) { *v0 += *e; *v1 += *e ^ 5u; }`, "lz_minc")
	lazyConst  = op2.NewKernel(`void lz_kadd(const unsigned *b, unsigned *a) { *a = 3u * *a + *b * lz_k; }`, "lz_kadd")
)

// lazyRanksResult is what a run of lazyRanksMesh gives: every Dat
// gathered in the declared numbering at the end and the Globals' values
// read at each collective point, and the deepest queue a rank saw.
type lazyRanksResult struct {
	A, B, C, E, F []uint32
	G             []uint32 // nil when run declared no g
	Globals       []uint32
	Deepest       int `json:"-"`
}

// ringValues is the values (first+i)·k + 1 of n nodes of a ring from
// node first on: a Dat's block on a rank, with a different k per Dat.
func ringValues(first, n int, k uint32) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = uint32(first+i)*k + 1
	}
	return v
}

// lazyRanksMesh is one ring of TestLazyOnRanks and its data: a, b, c
// and gid (each node's number in the declared numbering) on its nodes,
// e, f and eid on its edges, the Globals s (INC), m (MAX), lo (MIN) and x
// (only read by loops), the mixed dat of c and f, and the subsets of
// nodes and edges declared during the run (after Partition).
type lazyRanksMesh struct {
	n             int // nodes per rank
	nodes, edges  *op2.Set
	ring          *op2.Map
	self          *op2.Map      // edges to themselves, for the mixed map
	mixedMap      *op2.MixedMap // edges to the mixed dat's blocks: ring column 0, self
	a, b, c, e, f *op2.Dat[uint32]
	gid, eid      *op2.Dat[uint32]
	s, m, lo, x   *op2.Global[uint32]
	mixed         *op2.MixedDat[uint32]
	sub, esub     *op2.Subset
	few           *op2.Subset      // of edges, empty on every rank but the first
	g             *op2.Dat[uint32] // on nodes, declared during the run (after Partition)
	prepared      []*op2.Loop      // loops made with NewLoop during the run, run with Compute
	lazyFused     *op2.Runtime     // another lazy runtime, with Fusion "on"
	eager         *op2.Runtime     // another runtime, lazy mode off
	dir           string           // where the checkpoints and dumps go, the same on every rank
}

// newLazyRanksMesh declares a ring of n nodes per rank, on ranks ranks;
// in one process (op2.Ranks() 1) the whole ring, so that its results are
// what ranks ranks must give. dir holds its files.
func newLazyRanksMesh(t *testing.T, n, ranks int, dir string) *lazyRanksMesh {
	t.Helper()
	per := n
	if op2.Ranks() == 1 {
		per = n * ranks
	}
	nodes, ring := declareRing(t, per)
	first := op2.Rank() * per
	vals := func(k uint32) []uint32 { return ringValues(first, per, k) }
	z := &lazyRanksMesh{n: n, nodes: nodes, edges: ring.From(), ring: ring, dir: dir,
		a: must(op2.NewDat(nodes, 1, vals(7), "lz_a")), b: must(op2.NewDat(nodes, 1, vals(13), "lz_b")),
		c: must(op2.NewDat(nodes, 1, vals(3), "lz_c")), e: must(op2.NewDat[uint32](ring.From(), 1, nil, "lz_e")),
		f:   must(op2.NewDat(ring.From(), 1, vals(5), "lz_f")),
		gid: must(op2.NewDat(nodes, 1, vals(1), "lz_gid")), eid: must(op2.NewDat(ring.From(), 1, vals(1), "lz_eid")),
		s: must(op2.NewGlobal(1, []uint32{0}, "lz_s")), m: must(op2.NewGlobal(1, []uint32{0}, "lz_m")),
		lo: must(op2.NewGlobal(1, []uint32{^uint32(0)}, "lz_lo")), x: must(op2.NewGlobal(1, []uint32{9}, "lz_x"))}
	z.mixed = must(op2.NewMixedDatOf([]*op2.Dat[uint32]{z.c, z.f}, "lz_cf"))
	self := make([]int32, per)
	for i := range self {
		self[i] = int32(first + i)
	}
	z.self = must(op2.NewMap(z.edges, z.edges, 1, self, "lz_self"))
	return z
}

// ownedWhere returns the elements of d's set this rank owns (all of them in
// one process) whose number in the declared numbering (id, a Dat of
// vals(1): number + 1) satisfies keep.
func ownedWhere(d *op2.Dat[uint32], keep func(g int) bool) []int32 {
	var idx []int32
	ids := d.DataRO()
	for i := range d.Set().Size() {
		if keep(int(ids[i]) - 1) {
			idx = append(idx, int32(i))
		}
	}
	return idx
}

// checkBlocks checks that each rank owns the nodes and edges it declared
// (BlockPartitioner keeps declareRing's blocks), which the host writes on
// one rank of run rely on to be repeated in one process.
func (z *lazyRanksMesh) checkBlocks(t *testing.T) {
	t.Helper()
	lo, hi := op2.Rank()*z.n, (op2.Rank()+1)*z.n
	for _, d := range []*op2.Dat[uint32]{z.gid, z.eid} {
		if got := ownedWhere(d, func(g int) bool { return g >= lo && g < hi }); len(got) != z.n || d.Set().Size() != z.n {
			t.Fatalf("rank %d owns %d elements of %s, %d of them of its declared block: the test needs each rank to own its block", op2.Rank(), d.Set().Size(), d.Set().Name(), len(got))
		}
	}
}

// lazyConfigs are the configurations run's Configure steps rotate
// through (on every rank: Configure is collective); run ends with the
// last one, the default.
var lazyConfigs = []op2.Config{{Fusion: "on"}, op2.Config{}.Explicit("Lazy"), {Fusion: "off", Threads: 1}, {BlockSize: 3}, {Tile: 8}, {Check: true}, {}}

// lazyRankConfigs are the changes to the ranks' configuration that run's
// Configure steps on one rank only rotate through: none changes which
// loops fuse (Fusion, Tile, Check: a loop in check mode fuses with none),
// which would make the ranks' chains differ (a Chain then fails: the
// ranks are at different loops).
var lazyRankConfigs = []func(op2.Config) op2.Config{
	func(c op2.Config) op2.Config { return c.Explicit("Lazy") },
	func(c op2.Config) op2.Config { c.Threads = 1; return c },
	func(c op2.Config) op2.Config { c.BlockSize = 3; return c },
}

// run runs a random sequence of steps (seed) over the mesh, whose
// ranks it was declared for: loops that stay recorded on several ranks
// (direct ones, reads of halos that are up to date) and loops that run
// at once there (reductions, reads of stale halos, optional arguments,
// indirect loops computing the exec halo right after direct loops wrote
// what they read), host reads on one rank only (they force that rank's
// queue alone), host writes on one rank (unchanged values, or changes
// repeated in one process on the elements that rank owns), a write on
// every rank, collective reads, MIN and MAX reductions read on one rank
// or on all, a Global only read by recorded loops and set between them, a
// refused RW Global, loops over subsets declared during the run and over
// a mixed set, Configure, other runtimes' loops, a Chain, checkpoints and
// dumps written and read back.
func (z *lazyRanksMesh) run(t *testing.T, seed int64, ranks int) lazyRanksResult {
	t.Helper()
	rank, one := op2.Rank(), op2.Ranks() == 1
	nodes, edges, ring, a, b, c, e, f, s, m := z.nodes, z.edges, z.ring, z.a, z.b, z.c, z.e, z.f, z.s, z.m
	var res lazyRanksResult
	collect := func() { res.Globals = append(res.Globals, s.Value(), m.Value(), z.lo.Value(), z.x.Value()) }
	if z.lazyFused == nil {
		z.lazyFused = must(op2.NewRuntime(op2.Config{Fusion: "on"}))
		z.eager = must(op2.NewRuntime(op2.Config{}.Explicit("Lazy")))
	}
	hasHDF5 := h5.Load() == nil
	var cfg op2.Config // every rank's configuration (Configure's, on every rank)
	k := must(op2.NewConst(1, []uint32{4}, "lz_k"))
	defer k.Remove()
	rng := rand.New(rand.NewSource(seed))
	for step := 0; step < 120; step++ {
		who := rng.Intn(ranks) // the rank of a one-rank step
		on := rng.Intn(3) != 0
		switch rng.Intn(32) {
		case 0, 1:
			check(t, op2.ParLoop(lazyScale, nodes, a.Arg(op2.RW), b.Arg(op2.Read)))
		case 2:
			check(t, op2.ParLoop(lazyDiff, edges, a.ArgMap(op2.Read, ring, 0), a.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write)))
		case 3:
			check(t, op2.ParLoop(lazySpread, edges, e.Arg(op2.Read), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
		case 4:
			check(t, op2.ParLoop(lazySum, nodes, a.Arg(op2.Read), s.Arg(op2.Inc)))
		case 5:
			check(t, op2.ParLoop(lazyMax, edges, e.Arg(op2.Read), m.Arg(op2.Max)))
		case 6:
			check(t, op2.ParLoop(lazyOpt, edges, e.Arg(op2.Read), op2.Opt(on, c.ArgMap(op2.Inc, ring, 0))))
		case 7:
			check(t, op2.ParLoop(lazyCopy, nodes, b.Arg(op2.Read), c.Arg(op2.Write)))
		case 8: // a host read on one rank: forces its queue alone
			if !one && rank == who {
				switch step % 3 {
				case 0:
					_ = a.DataRO()
				case 1:
					_ = s.Value()
				default:
					check(t, op2.Wait())
				}
			}
		case 9: // a host write on one rank (values unchanged), or on every rank
			if on {
				if !one && rank == who {
					_ = a.Data() // a is read through the ring
				}
				break
			}
			for i, d := 0, c.Data(); i < len(d) && i < nodes.Size(); i++ {
				d[i] += 11
			}
		case 10: // a collective read
			collect()
			_ = must(e.Gather())
		case 11: // a direct loop, then an indirect one reading what it wrote in the exec halo
			check(t, op2.ParLoop(lazyEdge, edges, f.Arg(op2.RW), e.Arg(op2.Read)))
			if on {
				check(t, op2.ParLoop(lazyPush, edges, f.Arg(op2.Read), a.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
			}
		case 12: // a direct loop, then one modifying the Dat it wrote through a map
			check(t, op2.ParLoop(lazyCopy, nodes, b.Arg(op2.Read), c.Arg(op2.Write)))
			if on {
				check(t, op2.ParLoop(lazyRWMap, edges, f.Arg(op2.Read), c.ArgMap(op2.RW, ring, 0)))
			} else {
				check(t, op2.ParLoop(lazyIMax, edges, e.Arg(op2.Read), c.ArgMap(op2.Max, ring, 0), c.ArgMap(op2.Max, ring, 1)))
			}
		case 13: // an exec-halo loop after a direct loop over the same set, on Dats it did not write
			check(t, op2.ParLoop(lazyScale, nodes, a.Arg(op2.RW), b.Arg(op2.Read)))
			check(t, op2.ParLoop(lazyPush, edges, f.Arg(op2.Read), c.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
		case 14: // MIN and MAX reductions, read on one rank only or on all
			check(t, op2.ParLoop(lazyMinMax, nodes, b.Arg(op2.Read), z.lo.Arg(op2.Min), m.Arg(op2.Max)))
			switch {
			case on && !one && rank == who:
				_, _ = z.lo.Value(), m.Value()
			case !on:
				collect()
			}
		case 15: // a Global only read, set on every rank between recorded loops
			if on {
				z.x.SetValue(uint32(step)*7 + 3)
			}
			check(t, op2.ParLoop(lazyGRead, nodes, z.x.Arg(op2.Read), m.Arg(op2.Read), a.Arg(op2.RW)))
			check(t, op2.ParLoop(lazyCopy, nodes, a.Arg(op2.Read), c.Arg(op2.Write)))
		case 16: // a RW Global is refused at the call on every rank, changing nothing
			if err := op2.ParLoop(lazyGRW, nodes, a.Arg(op2.Read), z.x.Arg(op2.RW)); err == nil {
				t.Errorf("rank %d, step %d: a loop with a RW Global ran", rank, step)
			}
		case 17: // subsets, declared (collectively) at their first step
			if z.sub == nil {
				z.sub = must(op2.NewSubset(nodes, ownedWhere(z.gid, func(g int) bool { return g%3 == 1 })))
				z.esub = must(op2.NewSubset(edges, ownedWhere(z.eid, func(g int) bool { return g%2 == 0 })))
				break
			}
			switch step % 3 {
			case 0:
				check(t, op2.ParLoop(lazyScale, z.sub, a.Arg(op2.RW), b.Arg(op2.Read)))
			case 1:
				check(t, op2.ParLoop(lazyPush, z.esub, f.Arg(op2.Read), a.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
			default:
				check(t, op2.ParLoop(lazyRWMap, z.esub, e.Arg(op2.Read), c.ArgMap(op2.RW, ring, 0)))
			}
		case 18: // a loop over a mixed set (one loop per block)
			check(t, op2.ParLoop(lazyMix, z.mixed.Set(), z.mixed.Arg(op2.RW)))
		case 19: // Configure, on every rank
			cfg = lazyConfigs[step%len(lazyConfigs)]
			check(t, op2.Configure(cfg))
		case 20: // another runtime's loop: lazy with fusion, or eager
			r := z.lazyFused
			if on {
				r = z.eager
			}
			check(t, r.ParLoop(lazyScale, nodes, b.Arg(op2.RW), c.Arg(op2.Read)))
			check(t, r.ParLoop(lazyDiff, edges, b.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write)))
		case 21: // a checkpoint, or a dump written and read back, between recorded loops
			if on && hasHDF5 {
				check(t, op2.Checkpoint(filepath.Join(z.dir, "lazy.h5"), map[string][]byte{"step": {byte(step)}}))
				break
			}
			path := filepath.Join(z.dir, "lazy-e.bin")
			check(t, e.WriteBinary(path))
			check(t, op2.ParLoop(lazyEdge, edges, f.Arg(op2.RW), e.Arg(op2.Read)))
			check(t, f.ReadBinary(path))
		case 22: // a Chain
			check(t, op2.Chain(func() error {
				check(t, op2.ParLoop(lazyEdge, edges, f.Arg(op2.RW), e.Arg(op2.Read)))
				check(t, op2.ParLoop(lazyPush, edges, f.Arg(op2.Read), a.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
				return op2.ParLoop(lazySum, nodes, b.Arg(op2.Read), s.Arg(op2.Inc))
			}))
		case 23: // a host write on one rank that changes values, repeated in one process
			lo, hi := who*z.n, (who+1)*z.n
			if !one && rank != who {
				break
			}
			idx := ownedWhere(z.gid, func(g int) bool { return g >= lo && g < hi && g%4 == step%4 })
			d := a.Data()
			for _, i := range idx {
				d[i] += 5
			}
		case 24: // Zero on one rank (its own business), repeated in one process on its elements
			if one {
				d := c.Data()
				clear(d[who*z.n : (who+1)*z.n])
			} else if rank == who {
				check(t, c.Zero())
			}
		case 25: // CopyTo on one rank, or on every rank
			switch {
			case on && one:
				d, from := c.Data(), b.DataRO()
				copy(d[who*z.n:(who+1)*z.n], from[who*z.n:(who+1)*z.n])
			case on && rank == who:
				check(t, b.CopyTo(c))
			case !on:
				check(t, a.CopyTo(b))
			}
		case 26: // a Const read by recorded loops, set on every rank between them
			check(t, op2.ParLoop(lazyConst, nodes, b.Arg(op2.Read), a.Arg(op2.RW)))
			check(t, k.Set(uint32(step)+1))
			check(t, op2.ParLoop(lazyConst, nodes, c.Arg(op2.Read), a.Arg(op2.RW)))
		case 27: // Configure on one rank only (a call a rank may make alone), back to cfg on every rank
			if on && !one && rank == who {
				check(t, op2.Configure(lazyRankConfigs[step%len(lazyRankConfigs)](cfg)))
			} else if !on {
				check(t, op2.Configure(cfg))
			}
		case 28: // a Dat declared with values during the run (its halo stale), read through the ring
			if z.g == nil {
				ids := z.gid.DataRO()[:nodes.Size()]
				v := make([]uint32, len(ids))
				for i, id := range ids {
					v[i] = 3*id + 2
				}
				z.g = must(op2.NewDat(nodes, 1, v, "lz_g"))
			}
			check(t, op2.ParLoop(lazyScale, nodes, z.g.Arg(op2.RW), a.Arg(op2.Read)))
			check(t, op2.ParLoop(lazyPush, edges, f.Arg(op2.Read), z.g.ArgMap(op2.Read, ring, 0), c.ArgMap(op2.Inc, ring, 0), c.ArgMap(op2.Inc, ring, 1)))
		case 29: // a subset of edges empty on every rank but the first, modifying through the ring
			if z.few == nil {
				z.few = must(op2.NewSubset(edges, ownedWhere(z.eid, func(g int) bool { return g < 3 })))
			}
			check(t, op2.ParLoop(lazyEdge, z.few, f.Arg(op2.RW), e.Arg(op2.Read)))
			check(t, op2.ParLoop(lazyPush, z.few, f.Arg(op2.Read), a.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
		case 30: // a write through a map after a direct write, then increments through a mixed map
			check(t, op2.ParLoop(lazyEdge, edges, f.Arg(op2.RW), e.Arg(op2.Read)))
			check(t, op2.ParLoop(lazyWMap, edges, f.Arg(op2.Read), c.ArgMap(op2.Write, ring, 0)))
			if on {
				if z.mixedMap == nil {
					z.mixedMap = must(op2.NewMixedMap([]*op2.Map{ring, z.self}, "lz_mm"))
				}
				check(t, op2.ParLoop(lazyMixInc, edges, e.Arg(op2.Read), z.mixed.ArgMap(op2.Inc, z.mixedMap, 0)))
			}
		case 31: // loops made once (NewLoop), run again and again (Compute)
			if z.prepared == nil {
				z.prepared = []*op2.Loop{
					must(op2.NewLoop(lazyScale, nodes, a.Arg(op2.RW), b.Arg(op2.Read))),
					must(op2.NewLoop(lazyDiff, edges, a.ArgMap(op2.Read, ring, 0), a.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write))),
					must(op2.NewLoop(lazyPush, edges, f.Arg(op2.Read), a.ArgMap(op2.Read, ring, 0), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1))),
				}
			}
			check(t, z.prepared[step%3].Compute())
			if on {
				check(t, z.prepared[(step+1)%3].Compute())
			}
		}
		res.Deepest = max(res.Deepest, op2.RecordedLoops())
	}
	check(t, op2.Configure(lazyConfigs[len(lazyConfigs)-1]))
	for _, d := range []struct {
		dat *op2.Dat[uint32]
		out *[]uint32
	}{{a, &res.A}, {b, &res.B}, {c, &res.C}, {e, &res.E}, {f, &res.F}, {z.g, &res.G}} {
		if d.dat != nil {
			*d.out = must(d.dat.Gather())
		}
	}
	collect()
	return res
}

// TestLazyOnRanks: lazy evaluation, the default on several MPI ranks
// too, gives one process's results on 2 and 3 ranks (and on openmp with
// 2 threads on 2 ranks) over random loop sequences (see run: indirect
// loops computing the exec halo after direct ones, MIN/MAX/INC
// reductions, subsets, a mixed set, Configure, other runtimes, Chain,
// checkpoints and dumps, Consts), with accessors and host writes on one
// rank only between the loops (which must neither hang nor reorder any
// rank's messages); loops stay recorded there.
func TestLazyOnRanks(t *testing.T) {
	const n = 10
	seeds := []int64{1, 2, 3}
	if mpitest.InRanks() {
		var want map[string]lazyRanksResult
		b, err := os.ReadFile(os.Getenv("OP2_LAZY_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		var meshes []*lazyRanksMesh
		for range seeds {
			meshes = append(meshes, newLazyRanksMesh(t, n, op2.Ranks(), filepath.Dir(os.Getenv("OP2_LAZY_EXPECT"))))
		}
		must(op2.Partition(op2.BlockPartitioner()))
		meshes[0].checkBlocks(t)
		for k, seed := range seeds {
			got := meshes[k].run(t, seed, op2.Ranks())
			w := want[fmt.Sprintf("%d/%d", seed, op2.Ranks())]
			if got.Deepest < 2 {
				t.Errorf("rank %d, seed %d: at most %d loops recorded at once: lazy mode recorded nothing", op2.Rank(), seed, got.Deepest)
			}
			if !slices.Equal(got.Globals, w.Globals) {
				t.Errorf("rank %d, seed %d: Globals %v, want %v", op2.Rank(), seed, got.Globals, w.Globals)
			}
			if op2.Rank() == 0 && (!slices.Equal(got.A, w.A) || !slices.Equal(got.B, w.B) || !slices.Equal(got.C, w.C) || !slices.Equal(got.E, w.E) || !slices.Equal(got.F, w.F) || !slices.Equal(got.G, w.G)) {
				t.Errorf("seed %d on %d ranks: the gathered Dats differ from one process's", seed, op2.Ranks())
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := map[string]lazyRanksResult{}
	for _, ranks := range []int{2, 3} {
		for _, seed := range seeds {
			want[fmt.Sprintf("%d/%d", seed, ranks)] = newLazyRanksMesh(t, n, ranks, t.TempDir()).run(t, seed, ranks)
		}
	}
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	for _, run := range []struct {
		ranks   int
		backend string
	}{{2, "sequential"}, {3, "sequential"}, {2, "openmp"}} {
		t.Run(strconv.Itoa(run.ranks)+"-ranks-"+run.backend, func(t *testing.T) {
			mpiRun(t, run.ranks, 2*time.Minute, "OP2_LAZY_EXPECT="+path, "OP2_MPI_TIMEOUT=60s", "OP2_BACKEND="+run.backend, "OP2_THREADS=2",
				"OP2_TEST_CACHE_DIR="+os.Getenv("OP2_CACHE_DIR"))
		})
	}
}

// TestLazyRuntimesInChainOnRanks: on 2 ranks, while one runtime's Chain
// is open, another runtime's loops (lazy, the default) are the chain's:
// one with a reduction gives what it gives with that runtime eager, and
// an accessor that one rank alone calls on a Dat such a loop modifies is
// refused there (*ChainAccessError) instead of running it on that rank
// only, which made the ranks' chains differ.
func TestLazyRuntimesInChainOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	nodes, ring := declareRing(t, 6)
	edges := ring.From()
	vals := func(k uint32) []uint32 { return ringValues(op2.Rank()*6, 6, k) }
	type data struct {
		a, b *op2.Dat[uint32]
		e    *op2.Dat[uint32]
		s    *op2.Global[uint32]
	}
	mk := func(tag string) data {
		return data{must(op2.NewDat(nodes, 1, vals(3), "ra"+tag)), must(op2.NewDat(nodes, 1, vals(5), "rb"+tag)),
			must(op2.NewDat[uint32](edges, 1, nil, "re"+tag)), must(op2.NewGlobal(1, []uint32{0}, "rs"+tag))}
	}
	ds := map[string]data{"eager": mk("1"), "lazy": mk("2"), "refused": mk("3")}
	must(op2.Partition(op2.BlockPartitioner()))
	sums := map[string]uint32{}
	for _, mode := range []string{"eager", "lazy"} {
		d := ds[mode]
		cfg := op2.Config{}
		if mode == "eager" {
			cfg = cfg.Explicit("Lazy")
		}
		other := must(op2.NewRuntime(cfg))
		check(t, op2.Chain(func() error {
			check(t, op2.ParLoop(lazyScale, nodes, d.a.Arg(op2.RW), d.b.Arg(op2.Read)))
			return other.ParLoop(lazySum, nodes, d.a.Arg(op2.Read), d.s.Arg(op2.Inc))
		}))
		sums[mode] = d.s.Value()
	}
	if sums["lazy"] != sums["eager"] {
		t.Errorf("rank %d: another runtime's reduction in a Chain: %d, with that runtime eager %d", op2.Rank(), sums["lazy"], sums["eager"])
	}
	d := ds["refused"]
	other := must(op2.NewRuntime(op2.Config{}))
	check(t, op2.Chain(func() error {
		check(t, other.ParLoop(lazyScale, nodes, d.b.Arg(op2.RW), d.a.Arg(op2.Read)))
		if op2.Rank() == 1 {
			var ce *op2.ChainAccessError
			if _, err := d.b.DataROErr(); !errors.As(err, &ce) {
				t.Errorf("rank 1: reading a Dat another runtime's loop in the Chain modifies: %v, want a *ChainAccessError", err)
			}
		}
		return op2.ParLoop(lazyDiff, edges, d.b.ArgMap(op2.Read, ring, 0), d.b.ArgMap(op2.Read, ring, 1), d.e.Arg(op2.Write))
	}))
	_ = must(d.e.Gather())
	check(t, op2.Finalize())
}

// TestLazyFusesOnRanks: on 2 ranks, loops lazy mode records fuse (here
// with Fusion "on", which builds the fused loop when first wanted), and
// give what the loops run at once give.
func TestLazyFusesOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	nodes, _ := declareRing(t, 8)
	vals := func(k uint32) []uint32 { return ringValues(op2.Rank()*8, 8, k) }
	var a, b, c [2]*op2.Dat[uint32]
	for i := range 2 {
		a[i], b[i], c[i] = must(op2.NewDat(nodes, 1, vals(3), "fa")), must(op2.NewDat(nodes, 1, vals(5), "fb")), must(op2.NewDat[uint32](nodes, 1, nil, "fc"))
	}
	must(op2.Partition(op2.BlockPartitioner()))
	var got [2][]uint32
	for i, cfg := range []op2.Config{op2.Config{}.Explicit("Lazy"), {Fusion: "on", Timing: true}} {
		r := must(op2.NewRuntime(cfg))
		for range 3 {
			check(t, r.ParLoop(lazyScale, nodes, a[i].Arg(op2.RW), b[i].Arg(op2.Read)))
			check(t, r.ParLoop(lazyCopy, nodes, b[i].Arg(op2.Read), c[i].Arg(op2.Write)))
		}
		check(t, r.Wait())
		got[i] = append(must(a[i].Gather()), must(c[i].Gather())...)
		if i == 1 {
			fused := false
			for _, lt := range r.Timings() {
				fused = fused || strings.HasPrefix(lt.Kernel, "fused_")
			}
			if !fused {
				t.Errorf("rank %d: no fused loop ran: %+v", op2.Rank(), r.Timings())
			}
		}
	}
	if op2.Rank() == 0 && !slices.Equal(got[0], got[1]) {
		t.Errorf("fused on ranks %v, at once %v", got[1], got[0])
	}
	check(t, op2.Finalize())
}

// TestLazyAgreesOnceOnRanks: on 2 ranks, a loop lazy mode may not record
// because one rank changed a halo it reads on the host agrees with the
// other ranks once (the agreement made as it was issued), exchanges
// that halo, and gives what an eager runtime gives.
func TestLazyAgreesOnceOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s")
		return
	}
	const n = 8
	nodes, ring := declareRing(t, n)
	edges := ring.From()
	rank := op2.Rank()
	vals := make([]uint32, n)
	for i := range vals {
		vals[i] = uint32(rank*n+i)*7 + 1
	}
	var a [2]*op2.Dat[uint32]
	var e [2]*op2.Dat[uint32]
	for i := range 2 {
		a[i], e[i] = must(op2.NewDat(nodes, 1, vals, "oa")), must(op2.NewDat[uint32](edges, 1, nil, "oe"))
	}
	must(op2.Partition(op2.BlockPartitioner()))
	var got [2][]uint32
	for i, r := range []*op2.Runtime{must(op2.NewRuntime(op2.Config{}.Explicit("Lazy"))), op2.Default()} {
		diff := func() {
			check(t, r.ParLoop(lazyDiff, edges, a[i].ArgMap(op2.Read, ring, 0), a[i].ArgMap(op2.Read, ring, 1), e[i].Arg(op2.Write)))
		}
		diff()
		check(t, r.Wait())
		if rank == 0 { // a host write on one rank: the others' halos of a are out of date
			d := a[i].Data()
			d[0] += 100
		}
		before := op2.ReadHaloStats()
		diff()
		after := op2.ReadHaloStats()
		if i == 1 {
			if got := after.Agreements - before.Agreements; got != 1 {
				t.Errorf("rank %d: %d agreements for a loop reading a halo rank 0 changed, want 1", rank, got)
			}
			if after.Messages == before.Messages {
				t.Errorf("rank %d: the loop exchanged no halo", rank)
			}
		}
		got[i] = must(e[i].Gather())
	}
	if rank == 0 && !slices.Equal(got[0], got[1]) {
		t.Errorf("lazy %v, at once %v", got[1], got[0])
	}
	check(t, op2.Finalize())
}

// TestLazyOnRanksAllocatesNothing: on 2 ranks, a repeated sequence of
// loops in lazy mode (the default) — loops it records, loops that run at
// once (a reduction; a halo read of a Dat a recorded loop modified), a
// Global read, rank-local forcing and host writes — allocates nothing
// once warm, as in one process: neither the loops nor MPI's calls; nor
// does the same sequence in a Chain (its loops in one collective run,
// with grouped exchanges), on sequential, openmp and opencl (whose
// loops run when issued, their halo rows packed on the device).
func TestLazyOnRanksAllocatesNothing(t *testing.T) {
	if !mpitest.InRanks() {
		for _, backend := range []string{"sequential", "openmp", "opencl"} {
			t.Run(backend, func(t *testing.T) {
				needBackend(t, backend)
				mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=60s", "OP2_BACKEND="+backend, "OP2_THREADS=2")
			})
		}
		return
	}
	z := newLazyRanksMesh(t, 64, 2, t.TempDir())
	must(op2.Partition(op2.BlockPartitioner()))
	nodes, edges, ring, a, b, e, s := z.nodes, z.edges, z.ring, z.a, z.b, z.e, z.s
	loops := func() {
		check(t, op2.ParLoop(lazyScale, nodes, a.Arg(op2.RW), b.Arg(op2.Read)))
		check(t, op2.ParLoop(lazyCopy, nodes, b.Arg(op2.Read), z.c.Arg(op2.Write)))
		check(t, op2.ParLoop(lazyDiff, edges, a.ArgMap(op2.Read, ring, 0), a.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write)))
		check(t, op2.ParLoop(lazySpread, edges, e.Arg(op2.Read), b.ArgMap(op2.Inc, ring, 0), b.ArgMap(op2.Inc, ring, 1)))
		check(t, op2.ParLoop(lazyDiff, edges, z.c.ArgMap(op2.Read, ring, 0), z.c.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write)))
		s.SetValue(0)
		check(t, op2.ParLoop(lazySum, nodes, a.Arg(op2.Read), s.Arg(op2.Inc)))
	}
	chained := func() error { loops(); return nil }
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"lazy", func() {
			loops()
			_ = s.Value()
			if op2.Rank() == 0 {
				check(t, op2.Wait())
				_ = b.Data() // a host write on one rank (values unchanged)
			}
		}},
		{"chain", func() {
			check(t, op2.Chain(chained))
			_ = s.Value()
		}},
	} {
		// Warm: the fused programs build in the background and are
		// taken when the loops next run (each rank waits for its own).
		for range 2 {
			for range 4 {
				c.run()
			}
			for end := time.Now().Add(time.Minute); op2.PendingBuilds() > 0 && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if n := testing.AllocsPerRun(20, c.run); n != 0 {
			t.Errorf("rank %d, %s: %.1f allocations per sequence, want 0", op2.Rank(), c.name, n)
		}
	}
	check(t, op2.Finalize())
}

// TestLazyOnSomeRanksOnly: on 2 ranks, lazy mode on one rank and off on
// the other (Configure is a call a rank may make alone) agree as many
// times before a loop: a loop lazy mode cannot record (it reads a halo a
// rank changed on the host) agreed on as it is issued runs at once on
// that agreement instead of agreeing again, which the rank running loops
// at once did not (both ranks then waited, in different MPI calls,
// until OP2_MPI_TIMEOUT).
func TestLazyOnSomeRanksOnly(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=20s")
		return
	}
	nodes, ring := declareRing(t, 4)
	edges := ring.From()
	first := uint32(op2.Rank() * 4)
	a := must(op2.NewDat(nodes, 1, []uint32{first + 1, first + 2, first + 3, first + 4}, "sa"))
	e := must(op2.NewDat[uint32](edges, 1, nil, "se"))
	must(op2.Partition(op2.BlockPartitioner()))
	check(t, op2.ParLoop(lazyDiff, edges, a.ArgMap(op2.Read, ring, 0), a.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write))) // a's halo is current
	if op2.Rank() == 1 {
		check(t, op2.Configure(op2.Config{}.Explicit("Lazy")))
	}
	for i := range 3 {
		if op2.Rank() == i%2 {
			d := a.Data()
			d[0] += 7
		}
		check(t, op2.ParLoop(lazyDiff, edges, a.ArgMap(op2.Read, ring, 0), a.ArgMap(op2.Read, ring, 1), e.Arg(op2.Write)))
	}
	got := must(e.Gather())
	check(t, op2.Configure(op2.Config{}))
	if op2.Rank() == 0 {
		want := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
		want[0] += 14
		want[4] += 7
		for k := range want {
			if w := want[k] - 5*want[(k+1)%8]; got[k] != w {
				t.Errorf("edge %d: %d, want %d", k, got[k], w)
			}
		}
	}
	check(t, op2.Finalize())
}
