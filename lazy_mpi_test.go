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
)

// lazyRanksResult is what a run of lazyRanksProgram gives: every Dat
// gathered in the declared numbering at the end and the Globals' values
// read at each collective point, and the deepest queue a rank saw.
type lazyRanksResult struct {
	A, B, C, E []uint32
	Globals    []uint32
	Deepest    int `json:"-"`
}

// lazyRanksMesh is one ring of TestLazyOnRanks and its data.
type lazyRanksMesh struct {
	nodes, edges *op2.Set
	ring         *op2.Map
	a, b, c, e   *op2.Dat[uint32]
	s, m         *op2.Global[uint32]
}

// newLazyRanksMesh declares a ring of n nodes per rank, on ranks ranks;
// in one process (op2.Ranks() 1) the whole ring, so that its results are
// what ranks ranks must give.
func newLazyRanksMesh(t *testing.T, n, ranks int) *lazyRanksMesh {
	t.Helper()
	per := n
	if op2.Ranks() == 1 {
		per = n * ranks
	}
	nodes, ring := declareRing(t, per)
	first := op2.Rank() * per
	vals := func(k uint32) []uint32 {
		v := make([]uint32, per)
		for i := range v {
			v[i] = uint32(first+i)*k + 1
		}
		return v
	}
	return &lazyRanksMesh{nodes: nodes, edges: ring.From(), ring: ring,
		a: must(op2.NewDat(nodes, 1, vals(7), "lz_a")), b: must(op2.NewDat(nodes, 1, vals(13), "lz_b")),
		c: must(op2.NewDat(nodes, 1, vals(3), "lz_c")), e: must(op2.NewDat[uint32](ring.From(), 1, nil, "lz_e")),
		s: must(op2.NewGlobal(1, []uint32{0}, "lz_s")), m: must(op2.NewGlobal(1, []uint32{0}, "lz_m"))}
}

// run runs a random sequence of steps (seed) over the mesh, whose
// ranks it was declared for: loops that stay recorded on several ranks
// (direct ones, reads of halos that are up to date) and loops that run
// at once there (reductions, reads of stale halos, optional arguments),
// host reads on one rank only (they force that rank's queue alone), a
// host write on one rank (its HostDirty makes the next halo read agree
// to exchange), a write on every rank, and collective reads.
func (z *lazyRanksMesh) run(t *testing.T, seed int64, ranks int) lazyRanksResult {
	t.Helper()
	rank, one := op2.Rank(), op2.Ranks() == 1
	nodes, edges, ring, a, b, c, e, s, m := z.nodes, z.edges, z.ring, z.a, z.b, z.c, z.e, z.s, z.m
	var res lazyRanksResult
	rng := rand.New(rand.NewSource(seed))
	for step := 0; step < 80; step++ {
		who := rng.Intn(ranks) // the rank of a one-rank step
		on := rng.Intn(3) != 0
		switch k := rng.Intn(11); k {
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
			res.Globals = append(res.Globals, s.Value(), m.Value())
			_ = must(e.Gather())
		}
		res.Deepest = max(res.Deepest, op2.RecordedLoops())
	}
	for _, d := range []struct {
		dat *op2.Dat[uint32]
		out *[]uint32
	}{{a, &res.A}, {b, &res.B}, {c, &res.C}, {e, &res.E}} {
		*d.out = must(d.dat.Gather())
	}
	res.Globals = append(res.Globals, s.Value(), m.Value())
	return res
}

// TestLazyOnRanks: lazy evaluation, the default on several MPI ranks
// too, gives one process's results on 2 and 3 ranks (and on openmp with
// 2 threads on 2 ranks) over random loop
// sequences, with accessors and host writes on one rank only between
// the loops (which must neither hang nor reorder any rank's messages);
// loops stay recorded there.
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
			meshes = append(meshes, newLazyRanksMesh(t, n, op2.Ranks()))
		}
		must(op2.Partition(op2.BlockPartitioner()))
		for k, seed := range seeds {
			got := meshes[k].run(t, seed, op2.Ranks())
			w := want[fmt.Sprintf("%d/%d", seed, op2.Ranks())]
			if got.Deepest < 2 {
				t.Errorf("rank %d, seed %d: at most %d loops recorded at once: lazy mode recorded nothing", op2.Rank(), seed, got.Deepest)
			}
			if !slices.Equal(got.Globals, w.Globals) {
				t.Errorf("rank %d, seed %d: Globals %v, want %v", op2.Rank(), seed, got.Globals, w.Globals)
			}
			if op2.Rank() == 0 && (!slices.Equal(got.A, w.A) || !slices.Equal(got.B, w.B) || !slices.Equal(got.C, w.C) || !slices.Equal(got.E, w.E)) {
				t.Errorf("seed %d on %d ranks: the gathered Dats differ from one process's", seed, op2.Ranks())
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := map[string]lazyRanksResult{}
	for _, ranks := range []int{2, 3} {
		for _, seed := range seeds {
			want[fmt.Sprintf("%d/%d", seed, ranks)] = newLazyRanksMesh(t, n, ranks).run(t, seed, ranks)
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
	first := uint32(op2.Rank() * 6)
	vals := func(k uint32) []uint32 {
		v := make([]uint32, 6)
		for i := range v {
			v[i] = (first+uint32(i))*k + 1
		}
		return v
	}
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
	first := uint32(op2.Rank() * 8)
	vals := func(k uint32) []uint32 {
		v := make([]uint32, 8)
		for i := range v {
			v[i] = (first+uint32(i))*k + 1
		}
		return v
	}
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
	z := newLazyRanksMesh(t, 64, 2)
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
